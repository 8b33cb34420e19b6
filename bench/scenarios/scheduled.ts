/**
 * Issue 54: 10,000 messages scheduled at once, across 10 channels, each posted within 1 s of its
 * time at p99: due over 40 s (250 a second), and, as information, all due in the same second (how
 * fast a burst drains: the post path's own rate bounds it). They are written into the store while
 * the service runs, as chat.scheduleMessage writes them; how late each was is its message's
 * `created_at` against its `post_at`.
 */
import type { Ctx } from "../../domain/context.ts";
import type { Message } from "../../core/types.ts";
import type { ScheduledMessage } from "../../core/scheduled_records.ts";
import { createChannel } from "../../domain/channels/channels.ts";
import { newId } from "../../core/ids.ts";
import { chunks } from "../../core/chunks.ts";
import { insertScheduled } from "../../kv/scheduled.ts";
import { keys } from "../../kv/keys.ts";
import { freePort, startService } from "../procs.ts";
import { infoRow, limitRow, type Row } from "../report.ts";
import { openCtx, type Seeded, seedWorkspace, serviceEnv } from "../seed.ts";
import { percentile } from "../pacing.ts";
import { type Bench, scenarioDir, using } from "./context.ts";

const MESSAGES = 10_000;
const CHANNELS = 10;
/** How far ahead they are scheduled: writing them takes a few seconds. */
const LEAD_S = 20;
/** Over how long the first batch is due: 250 a second, a steady rate the post path keeps up with. */
const SPREAD_S = 40;

async function seedChannels(ctx: Ctx, seeded: Seeded): Promise<string[]> {
  const out = [seeded.channel.id];
  for (let i = 1; i < CHANNELS; i++) {
    out.push(
      (await createChannel(ctx, seeded.subject, { name: `sched-${i}`, visibility: "public" })).id,
    );
  }
  return out;
}

/** The i-th message's time: `spreadS` seconds after `first`, evenly. */
const timeOf = (i: number, { first, spreadS }: Due) => first + Math.floor((i * spreadS) / MESSAGES);

interface Due {
  /** Unix seconds. */
  first: number;
  spreadS: number;
  tag: string;
}

/** Writes the scheduled messages, 64 commits in flight. */
async function schedule(
  ctx: Ctx,
  { seeded, channels, spreadS, tag }: {
    seeded: Seeded;
    channels: string[];
    spreadS: number;
    tag: string;
  },
): Promise<Due> {
  const due = { first: Math.floor(Date.now() / 1000) + LEAD_S, spreadS, tag };
  const records: ScheduledMessage[] = Array.from({ length: MESSAGES }, (_, i) => ({
    id: newId(),
    team_id: seeded.subject.team_id,
    channel_id: channels[i % CHANNELS],
    author_id: seeded.subject.user_id,
    token_hash: seeded.subject.token_hash!,
    post_at: timeOf(i, due),
    created_at: due.first - LEAD_S,
    body: `${tag} ${i}`,
    blocks: null,
    thread_root_id: null,
    sent_to_channel: false,
  }));
  for (const batch of chunks(records, 64)) {
    await Promise.all(batch.map((r) => insertScheduled(ctx.kv, r)));
  }
  if (Date.now() > due.first * 1000) throw new Error("scheduling took longer than the lead");
  return due;
}

/** How late each scheduled message was posted (ms), once all are. */
async function lateness(ctx: Ctx, channels: string[], due: Due): Promise<number[]> {
  const late: number[] = [];
  const deadline = (due.first + due.spreadS) * 1000 + 120_000;
  while (late.length < MESSAGES) {
    if (Date.now() > deadline) throw new Error(`only ${late.length} of ${MESSAGES} posted`);
    await new Promise((r) => setTimeout(r, 1_000));
    late.length = 0;
    for (const channel of channels) {
      for await (const e of ctx.kv.list<Message>({ prefix: keys.timeline(channel) })) {
        const [tag, i] = e.value.body.split(" ");
        if (tag !== due.tag) continue;
        late.push(Date.parse(e.value.created_at) - timeOf(Number(i), due) * 1000);
      }
    }
  }
  return late.sort((a, b) => a - b);
}

export async function scheduled({ root }: Bench): Promise<Row[]> {
  const dir = await scenarioDir(root, "scheduled");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  try {
    const seeded = await seedWorkspace(ctx);
    const channels = await seedChannels(ctx, seeded);
    return await using(startService(serviceEnv(kvPath, freePort())), async () => {
      const spread = await schedule(ctx, { seeded, channels, spreadS: SPREAD_S, tag: "spread" });
      const late = await lateness(ctx, channels, spread);
      const burst = await schedule(ctx, { seeded, channels, spreadS: 0, tag: "burst" });
      const drained = await lateness(ctx, channels, burst);
      const ms = (xs: number[], q: number) => percentile(xs, q).toFixed(0);
      return [
        infoRow(
          `${MESSAGES} scheduled, due over ${SPREAD_S} s: how late each was posted, p50 / max`,
          `${ms(late, 0.5)} / ${late.at(-1)!.toFixed(0)} ms`,
        ),
        limitRow(
          `${MESSAGES} scheduled, due over ${SPREAD_S} s: how late each was posted, p99`,
          percentile(late, 0.99),
          1_000,
          "ms",
        ),
        infoRow(
          `${MESSAGES} due in the same second: how late, p50 / p99; posted per second`,
          `${ms(drained, 0.5)} / ${ms(drained, 0.99)} ms; ${
            (MESSAGES / (drained.at(-1)! / 1000)).toFixed(0)
          }/s`,
        ),
      ];
    });
  } finally {
    ctx.kv.close();
  }
}
