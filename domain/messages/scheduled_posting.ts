/**
 * Posts scheduled messages at their time (decisions.md, "More of the Web API"), exactly once
 * across restarts and instances: each is posted as its author's token then allows, and the
 * post's commit deletes its record and checks that it was still there, so a second poster (or a
 * chat.deleteScheduledMessage) racing it makes one of the two fail: a post that landed is never
 * made again. Every process looks; whoever holds the turn posts.
 */
import type { Ctx } from "../context.ts";
import type { Token } from "../../core/types.ts";
import type { ScheduledMessage } from "../../core/scheduled_records.ts";
import { ApiError } from "../../core/errors.ts";
import { errorFields, log } from "../../core/log.ts";
import { Periodic } from "../../core/periodic.ts";
import { getTokenByHash } from "../../kv/tokens.ts";
import {
  deleteScheduled,
  dueScheduledIds,
  scheduledEntries,
  scheduledIndexes,
  scheduledKey,
  takeScheduledTurn,
} from "../../kv/scheduled.ts";
import { isTokenLive } from "../people/token_format.ts";
import { subjectOf } from "../people/authenticate.ts";
import { postMessageWith } from "./messages.ts";
import { USED_UP_GONE } from "./post_guards.ts";

export const SCHEDULED_CRON_NAME = "post scheduled messages";

/** How often each process looks for what is due: well within the second a post may be late. */
export const LOOK_EVERY_MS = 200;
/** Due messages read at once. */
const BATCH = 1_000;
/** Posts in flight at once: enough for the channels' group commits to fill. */
const IN_FLIGHT = 128;
/**
 * How long a turn holds the other processes back without being renewed: what a process that
 * died holding it delays the others by. A turn outlived only costs work: the commits still let
 * one post win.
 */
const TURN_MS = 5_000;

/** What one look posted, and whether it stopped with more due (its budget spent). */
export interface PostRun {
  posted: number;
  dropped: number;
  cutShort: boolean;
}

/**
 * Posts what is due by now, for up to `budgetMs`, when this process (`owner`) gets the turn.
 * Never throws for one message: a refused one is dropped and logged, a failed one waits for the
 * next look.
 */
export async function postDue(
  ctx: Ctx,
  { owner, budgetMs }: { owner: string; budgetMs: number },
): Promise<PostRun> {
  const run: PostRun = { posted: 0, dropped: 0, cutShort: false };
  const deadline = Date.now() + budgetMs;
  const tokens = new Map<string, Promise<Token | null>>();
  while (true) {
    const now = Date.now();
    const ids = await dueScheduledIds(ctx.kv, now, BATCH);
    if (ids.length === 0) return run;
    if (now >= deadline) return { ...run, cutShort: true };
    const until = now + TURN_MS;
    if (!await takeScheduledTurn(ctx.kv, { owner, until, now })) return run;
    const entries = await scheduledEntries(ctx.kv, ids);
    const outcomes = await inFlight(entries, (e) => postOne(ctx, e, tokens));
    run.posted += outcomes.filter((o) => o === "posted").length;
    run.dropped += outcomes.filter((o) => o === "dropped").length;
    if (outcomes.every((o) => o === "failed")) return run;
  }
}

/** Runs `step` over `items`, IN_FLIGHT at a time, in order of start. */
async function inFlight<T, R>(items: T[], step: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await step(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, items.length) }, worker));
  return out;
}

type Outcome = "posted" | "dropped" | "failed";

async function postOne(
  ctx: Ctx,
  entry: Deno.KvEntry<ScheduledMessage>,
  tokens: Map<string, Promise<Token | null>>,
): Promise<Outcome> {
  const m = entry.value;
  if (!tokens.has(m.token_hash)) tokens.set(m.token_hash, getTokenByHash(ctx.kv, m.token_hash));
  const token = await tokens.get(m.token_hash)!;
  if (!isTokenLive(token, Date.now()) || !token.scopes.includes("messages:write")) {
    return await drop(ctx, entry, "the token that scheduled it no longer posts");
  }
  try {
    await postMessageWith(ctx, subjectOf(token), {
      channelId: m.channel_id,
      input: { ok: true, value: draftOf(m) },
      bodyField: "text",
      usedUp: { key: scheduledKey(m), alsoDelete: scheduledIndexes(m) },
    });
    return "posted";
  } catch (e) {
    if (e instanceof ApiError && e.message === USED_UP_GONE) return "dropped";
    if (e instanceof ApiError && e.status < 500) return await drop(ctx, entry, e.message);
    log.warn("scheduled message: posting failed; the next look tries again", {
      scheduled_message_id: m.id,
      ...errorFields(e),
    });
    return "failed";
  }
}

const draftOf = (m: ScheduledMessage) => ({
  body: m.body,
  blocks: m.blocks,
  attachments: m.attachments,
  thread_root_id: m.thread_root_id,
  sent_to_channel: m.sent_to_channel,
  metadata: m.metadata,
});

/** A message its author may no longer post there: deleted unposted, and logged. */
async function drop(
  ctx: Ctx,
  entry: Deno.KvEntry<ScheduledMessage>,
  why: string,
): Promise<Outcome> {
  await deleteScheduled(ctx.kv, entry);
  log.info("scheduled message: not posted", {
    scheduled_message_id: entry.value.id,
    channel_id: entry.value.channel_id,
    why,
  });
  return "dropped";
}

/** Looks every LOOK_EVERY_MS in a process with timers; `runDue` serves the cron task. */
export class ScheduledPoster extends Periodic {
  constructor(ctx: Ctx, owner = crypto.randomUUID()) {
    super((budgetMs) => postDue(ctx, { owner, budgetMs }), {
      everyMs: LOOK_EVERY_MS,
      what: "scheduled messages",
    });
  }
}
