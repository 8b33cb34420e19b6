import { invalid } from "../core/errors.ts";
import type { Keyring } from "../core/keyring.ts";

export const PER_PAGE = 50;

/**
 * A list of messages with dense positions 1..total: the channel timeline, read newest first, or
 * one thread, read oldest first. A cursor is bound to the list it was cut from.
 */
export interface PagedList {
  channelId: string;
  threadRootId: string | null;
  total: number;
}

const newestFirst = (list: PagedList) => list.threadRootId === null;

/**
 * What the client asked for: a page number, or a cursor (a position, already verified); and how
 * many a page holds (PER_PAGE unless a client of the Slack Web API asked for `limit`).
 */
export type PageStart = ({ page: number } | { cursorPos: number }) & { perPage?: number };

/** The positions a page covers (inclusive; empty when `lo > hi`) and their ranks. */
export interface Window {
  lo: number;
  hi: number;
  /** 1-based place of the first item in reading order, as the list is now. */
  startRank: number;
  endRank: number;
  /** The position the next page starts at, or null on the last page. */
  nextPos: number | null;
}

/** `?page=`: a positive integer, 1 when absent. */
export function parsePage(raw: string | undefined): number {
  if (raw === undefined) return 1;
  if (!/^[1-9][0-9]{0,14}$/.test(raw)) {
    throw invalid("page", "The page must be a positive integer.");
  }
  return Number(raw);
}

const cursorData = (list: PagedList, pos: number) =>
  `cursor|${list.channelId}|${list.threadRootId ?? "timeline"}|${pos}`;

const CURSOR = /^([1-9][0-9]{0,14})\.([A-Za-z0-9_-]{1,64})$/;

/** An opaque cursor for `pos`: the position and a MAC binding it to the list. */
export function encodeCursor(keyring: Keyring, list: PagedList, pos: number) {
  return `${pos}.${keyring.sign(cursorData(list, pos))}`;
}

/** The position a cursor points at, or a 422 when it was not issued for this list. */
export function decodeCursor(keyring: Keyring, list: PagedList, raw: string) {
  const match = CURSOR.exec(raw);
  const pos = match ? Number(match[1]) : 0;
  if (!match || !keyring.verify(cursorData(list, pos), match[2])) {
    throw invalid("cursor", "The cursor is not valid for this list; start again without it.");
  }
  return pos;
}

const channelCursorData = (userId: string, channelId: string) => `channels|${userId}|${channelId}`;

const CHANNEL_CURSOR = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]{1,64})$/;

/**
 * An opaque cursor for a user's list of channels, going on after `channelId`: the id and a MAC
 * binding it to the user, so that nobody can probe where a channel it doesn't see would sort.
 */
export const encodeChannelCursor = (keyring: Keyring, userId: string, channelId: string) =>
  `${channelId}.${keyring.sign(channelCursorData(userId, channelId))}`;

/** The channel a cursor of `userId`'s list goes on after, or a 422 when it is not one. */
export function decodeChannelCursor(keyring: Keyring, userId: string, raw: string): string {
  const match = CHANNEL_CURSOR.exec(raw);
  if (!match || !keyring.verify(channelCursorData(userId, match[1]), match[2])) {
    throw invalid("cursor", "The cursor is not valid for this list; start again without it.");
  }
  return match[1];
}

/**
 * The positions a page reads. Ranks count from the newest message in the timeline and from the
 * first reply in a thread; a cursor pins a position, so messages that arrive meanwhile shift
 * ranks but never what the next cursor page holds.
 */
export function pageWindow(list: PagedList, start: PageStart): Window {
  const { total } = list;
  const perPage = start.perPage ?? PER_PAGE;
  const newest = newestFirst(list);
  const startRank = "page" in start
    ? (start.page - 1) * perPage + 1
    : newest
    ? total - start.cursorPos + 1
    : start.cursorPos;
  const endRank = Math.min(total, startRank + perPage - 1);
  if (startRank > endRank) return { lo: 1, hi: 0, startRank, endRank, nextPos: null };
  const [lo, hi] = newest ? [total - endRank + 1, total - startRank + 1] : [startRank, endRank];
  const nextPos = endRank < total ? (newest ? lo - 1 : hi + 1) : null;
  return { lo, hi, startRank, endRank, nextPos };
}

export interface PageLinks {
  first: string;
  last: string;
  prev: string | null;
  next: string | null;
}

export interface PageMeta {
  current_page: number;
  from: number | null;
  last_page: number;
  per_page: number;
  to: number | null;
  total: number;
  path: string;
  next_cursor: string | null;
}

/**
 * Laravel's paging objects for a page of `count` items, `path` being the absolute URL of the
 * list. On a cursor page, `prev` is null and `next` follows the cursor.
 */
export function pagingObjects(
  keyring: Keyring,
  { list, path, start, window, count }: {
    list: PagedList;
    path: string;
    start: PageStart;
    window: Window;
    /** How many messages the page holds. */
    count: number;
  },
): { links: PageLinks; meta: PageMeta } {
  const perPage = start.perPage ?? PER_PAGE;
  const lastPage = Math.max(1, Math.ceil(list.total / perPage));
  const currentPage = "page" in start ? start.page : Math.ceil(window.startRank / perPage);
  const nextCursor = window.nextPos === null ? null : encodeCursor(keyring, list, window.nextPos);
  const url = (param: "page" | "cursor", value: string | number) => {
    const query = new URLSearchParams();
    if (list.threadRootId) query.set("thread_root_id", list.threadRootId);
    if (start.perPage !== undefined) query.set("limit", String(start.perPage));
    query.set(param, String(value));
    return `${path}?${query}`;
  };
  const byPage = "page" in start;
  return {
    links: {
      first: url("page", 1),
      last: url("page", lastPage),
      prev: byPage && currentPage > 1 ? url("page", currentPage - 1) : null,
      next: byPage
        ? (currentPage < lastPage ? url("page", currentPage + 1) : null)
        : (nextCursor ? url("cursor", nextCursor) : null),
    },
    meta: {
      current_page: currentPage,
      from: count ? window.startRank : null,
      last_page: lastPage,
      per_page: perPage,
      to: count ? window.endRank : null,
      total: list.total,
      path,
      next_cursor: nextCursor,
    },
  };
}
