import type { Ctx } from "../context.ts";
import type { Message, Subject } from "../../core/types.ts";
import { invalid } from "../../core/errors.ts";
import { loadChannelWith } from "../channels/access.ts";
import { messageKeyFor } from "./access.ts";
import {
  decodeCursor,
  type PagedList,
  type PageLinks,
  type PageMeta,
  type PageStart,
  pageWindow,
  pagingObjects,
  parsePage,
} from "../paging.ts";
import { readRange, threadKeys, timelineKeys } from "../../kv/messages.ts";

export interface ListQuery {
  page?: string;
  cursor?: string;
  thread_root_id?: string;
  /** Messages a page holds (the Slack Web API's `limit`); PER_PAGE (50) when absent. */
  limit?: number;
}

export interface MessagePage {
  messages: Message[];
  links: PageLinks;
  meta: PageMeta;
}

/**
 * GET /channels/{channel}/messages: a page of the timeline, newest first, or with
 * `thread_root_id` of that thread's replies, oldest first. One `getMany` (channel, membership,
 * list length, thread root) and one range read, however deep the page. `path` is the list's
 * absolute URL, for the paging links.
 */
export async function listMessages(
  ctx: Ctx,
  subject: Subject,
  channelId: string,
  { query, path }: { query: ListQuery; path: string },
): Promise<MessagePage> {
  const rootId = query.thread_root_id?.toLowerCase() ?? null;
  const rootKey = messageKeyFor(rootId);
  const listKeys = rootId === null ? timelineKeys(channelId) : threadKeys(rootId);
  const read = await loadChannelWith<{ length: Deno.KvU64; root: Message }>(
    ctx,
    subject,
    channelId,
    { extra: { length: rootId === null || rootKey ? listKeys.length : null, root: rootKey } },
  );
  const { length, root } = read.extra;
  if (rootId !== null && root.value?.channel_id !== read.channel.id) {
    throw invalid(
      "thread_root_id",
      "The thread_root_id must be the id of a message in this channel.",
    );
  }
  const list: PagedList = {
    channelId: read.channel.id,
    threadRootId: rootId,
    total: Number(length.value?.value ?? 0n),
  };
  const start: PageStart = query.cursor !== undefined
    ? { cursorPos: decodeCursor(ctx.keyring, list, query.cursor), perPage: query.limit }
    : { page: parsePage(query.page), perPage: query.limit };
  const window = pageWindow(list, start);
  const messages = await readRange(ctx.kv, listKeys, {
    lo: window.lo,
    hi: window.hi,
    reverse: rootId === null,
  });
  const paging = pagingObjects(ctx.keyring, {
    list,
    path,
    start,
    window,
    count: messages.length,
  });
  return { messages, ...paging };
}
