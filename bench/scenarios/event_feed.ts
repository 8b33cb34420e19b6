/**
 * Issue 33: reading the event feed costs what the reader sees. A member walks GET /events to the
 * end, 100 a page, over 1,000 events it sees: in a store that holds only those, and in one where
 * 100,000 events of a private channel it is not in lie between them. Also one page of 100 from
 * the middle of the first, where nothing is hidden; and the live stream's catch-up over the same
 * events, resumed from before the first.
 */
import { createChannel } from "../../domain/channels/channels.ts";
import { draftMessage } from "../../domain/messages/draft.ts";
import { messageView } from "../../domain/views.ts";
import type { Channel } from "../../core/types.ts";
import type { Ctx } from "../../domain/context.ts";
import { addEvent } from "../../kv/outbox/outbox.ts";
import { FEED_LAG_MS } from "../../domain/stream/feed.ts";
import { placeAt } from "../../core/ids.ts";
import { freePort, type Proc, startService } from "../procs.ts";
import { infoRow, type Row } from "../report.ts";
import { openCtx, seedMemberOf, seedWorkspace, serviceEnv } from "../seed.ts";
import { scenarioDir, using } from "./context.ts";
import type { Bench } from "./context.ts";

const VISIBLE = 1_000;
const HIDDEN = 100_000;
const PAGE = 100;
const ROUNDS = 3;
/** Walking past what the reader can't see may cost this much more than walking without it. */
const MAX_RATIO = 1.5;

interface Walked {
  events: number;
  ms: number;
  cpuMs: number;
  pages: number;
}

export async function eventFeed({ root }: Bench): Promise<Row[]> {
  const alone = await seedStore(root, 0);
  const among = await seedStore(root, HIDDEN);
  // Every event seeded is past the feed's hold-back before the first walk.
  await new Promise((r) => setTimeout(r, FEED_LAG_MS + 200));
  const walks: { alone: Walked[]; among: Walked[] } = { alone: [], among: [] };
  const catchUps: { alone: Walked[]; among: Walked[] } = { alone: [], among: [] };
  let onePage: Walked[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, store] of [["alone", alone], ["among", among]] as const) {
      await using(startService(serviceEnv(store.kvPath, freePort())), async (p) => {
        await walk(p, store.token); // warms the service up
        walks[name].push(await repeated(() => walk(p, store.token)));
        catchUps[name].push(await repeated(() => catchUp(p, store.token, store.before)));
        if (name === "alone") onePage = [...onePage, await middlePage(p, store.token)];
      });
    }
  }
  const best = (w: Walked[]) => w.reduce((a, b) => (b.cpuMs < a.cpuMs ? b : a));
  const [a, b] = [best(walks.alone), best(walks.among)];
  for (const w of [a, b]) {
    if (w.events !== VISIBLE) throw new Error(`the walk saw ${w.events} of ${VISIBLE} events`);
  }
  const ratio = b.cpuMs / a.cpuMs;
  const page = best(onePage);
  const [ca, cb] = [best(catchUps.alone), best(catchUps.among)];
  const catchUpRatio = cb.cpuMs / ca.cpuMs;
  return [
    {
      scenario: `GET /events: ${VISIBLE} seen among ${HIDDEN} hidden, vs alone`,
      value: `${b.cpuMs.toFixed(0)} ms CPU`,
      baseline: `${a.cpuMs.toFixed(0)} ms CPU`,
      ratio: `${ratio.toFixed(2)}x`,
      target: `<= ${MAX_RATIO}x`,
      pass: ratio <= MAX_RATIO,
      cpu: `walks of ${b.pages} / ${a.pages} pages in ${b.ms.toFixed(0)} / ${a.ms.toFixed(0)} ms`,
    },
    {
      scenario: `event stream catch-up: ${VISIBLE} seen among ${HIDDEN} hidden, vs alone`,
      value: `${cb.cpuMs.toFixed(0)} ms CPU`,
      baseline: `${ca.cpuMs.toFixed(0)} ms CPU`,
      ratio: `${catchUpRatio.toFixed(2)}x`,
      target: `<= ${MAX_RATIO}x`,
      pass: catchUpRatio <= MAX_RATIO,
      cpu: `in ${cb.ms.toFixed(0)} / ${ca.ms.toFixed(0)} ms`,
    },
    infoRow(
      `GET /events?limit=${PAGE}, nothing hidden`,
      `${(page.cpuMs * 1000 / PAGE).toFixed(0)} us CPU/event`,
      `${page.cpuMs.toFixed(1)} ms/page`,
    ),
  ];
}

/** A store with VISIBLE events a member sees, with `hidden` events it doesn't see between them. */
async function seedStore(root: string, hidden: number) {
  const dir = await scenarioDir(root, `feed-${hidden}`);
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  const reader = await seedMemberOf(ctx, seeded, 0);
  const secret = await createChannel(ctx, seeded.subject, {
    name: "secret",
    visibility: "private",
  });
  const perVisible = hidden / VISIBLE;
  let next = 0;
  const worker = async () => {
    while (next < VISIBLE + hidden) {
      const n = next++;
      const seen = perVisible === 0 || n % (perVisible + 1) === 0;
      await postWithEvent(ctx, seen ? seeded.channel : secret, seeded.subject.user_id, n);
    }
  };
  const before = placeAt(Date.now() - 60_000);
  await Promise.all(Array.from({ length: 64 }, worker));
  ctx.kv.close();
  return { kvPath, token: reader.token, before };
}

/** A message and its `message.created` event, in one commit, as a post makes them. */
async function postWithEvent(ctx: Ctx, channel: Channel, authorId: string, n: number) {
  const draft = draftMessage({
    channel,
    author: { id: authorId, name: "Bench Admin", type: "human" },
    body: `event ${n}`,
    type: "standard",
  });
  const created = ctx.kv.atomic();
  addEvent(created, [], {
    type: "message.created",
    team_id: channel.team_id,
    channel_id: channel.id,
    data: messageView(draft),
    open: channel.visibility === "public",
  });
  const stored = await ctx.kv.append(draft, { checks: [], with: created });
  if (!stored) throw new Error("seeding an event failed");
}

async function getPage(p: Proc, token: string, after: string | null) {
  const res = await fetch(
    `${p.url}/api/v1/events?limit=${PAGE}${after ? `&after=${after}` : ""}`,
    { headers: { Authorization: `Bearer ${token}` } },
  );
  if (!res.ok) throw new Error(`GET /events: HTTP ${res.status}`);
  return await res.json();
}

/** Walks the feed from its start to its end; the events seen, and what the service spent. */
async function walk(p: Proc, token: string): Promise<Walked> {
  const [t0, cpu0] = [performance.now(), p.cpuMs()];
  let after: string | null = null;
  let events = 0;
  let pages = 0;
  for (let more = true; more; pages++) {
    const body = await getPage(p, token, after);
    events += body.data.length;
    after = body.meta.next_cursor ?? after;
    more = body.meta.has_more;
  }
  return { events, pages, ms: performance.now() - t0, cpuMs: p.cpuMs() - cpu0 };
}

/** CPU is counted in 10 ms ticks: a measurement is the mean of REPEATS, for a finer figure. */
const REPEATS = 5;

async function repeated(measure: () => Promise<Walked>): Promise<Walked> {
  const all: Walked[] = [];
  for (let i = 0; i < REPEATS; i++) all.push(await measure());
  const mean = (f: (w: Walked) => number) => all.reduce((n, w) => n + f(w), 0) / REPEATS;
  return {
    events: all[0].events,
    pages: all[0].pages,
    ms: mean((w) => w.ms),
    cpuMs: mean((w) => w.cpuMs),
  };
}

/** Resumes the event stream from `after` until VISIBLE events came; what the service spent. */
async function catchUp(p: Proc, token: string, after: string): Promise<Walked> {
  const [t0, cpu0] = [performance.now(), p.cpuMs()];
  const controller = new AbortController();
  const res = await fetch(`${p.url}/api/v1/events/stream?after=${after}`, {
    headers: { Authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  if (!res.ok) throw new Error(`GET /events/stream: HTTP ${res.status}`);
  let events = 0;
  let rest = "";
  for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop()!;
    events += lines.filter((l) => l.startsWith("event: ")).length;
    if (events >= VISIBLE) break;
  }
  controller.abort();
  if (events !== VISIBLE) throw new Error(`the catch-up sent ${events} of ${VISIBLE} events`);
  return { events, pages: 1, ms: performance.now() - t0, cpuMs: p.cpuMs() - cpu0 };
}

/** One page of PAGE events from the middle of the feed, measured over 20 reads. */
async function middlePage(p: Proc, token: string): Promise<Walked> {
  const all: string[] = [];
  let after: string | null = null;
  for (let more = true; more;) {
    const body = await getPage(p, token, after);
    all.push(...body.data.map((e: { id: string }) => e.id));
    after = body.meta.next_cursor ?? after;
    more = body.meta.has_more;
  }
  const from = all[all.length / 2];
  const [t0, cpu0] = [performance.now(), p.cpuMs()];
  for (let i = 0; i < 20; i++) await getPage(p, token, from);
  return {
    events: PAGE,
    pages: 1,
    ms: (performance.now() - t0) / 20,
    cpuMs: (p.cpuMs() - cpu0) / 20,
  };
}
