/**
 * Issue 44: a bot's page of GET /events costs what it looks at, not how many channels the bot is
 * in. Bots in 10, 1,000 and 3,000 channels, each with 300 posts among its channels: CPU of the page
 * of 100 from its first post, against the bot in 10's (at most 1.5x).
 */
import { createChannel } from "../../domain/channels/channels.ts";
import { addMember } from "../../domain/channels/members.ts";
import { postMessage } from "../../domain/messages/messages.ts";
import { createToken } from "../../domain/people/tokens.ts";
import { createUser } from "../../domain/people/workspace.ts";
import { FEED_LAG_MS } from "../../domain/stream/feed.ts";
import { SCOPES } from "../../core/types.ts";
import { placeAt } from "../../core/ids.ts";
import type { Ctx } from "../../domain/context.ts";
import { freePort, type Proc, startService } from "../procs.ts";
import type { Row } from "../report.ts";
import { openCtx, type Seeded, seedWorkspace, serviceEnv } from "../seed.ts";
import { type Bench, scenarioDir, using } from "./context.ts";

const SIZES = [10, 1_000, 3_000];
const POSTS = 300;
const PAGE = 100;
const READS = 20;
const ROUNDS = 3;
const MAX_RATIO = 1.5;

export async function botFeed({ root }: Bench): Promise<Row[]> {
  const dir = await scenarioDir(root, "bot-feed");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  const bots: { size: number; token: string; after: string }[] = [];
  for (const size of SIZES) bots.push({ size, ...await seedBotIn(ctx, seeded, size) });
  ctx.kv.close();
  await new Promise((r) => setTimeout(r, FEED_LAG_MS + 200));

  const best = new Map<number, number>();
  for (let round = 0; round < ROUNDS; round++) {
    await using(startService(serviceEnv(kvPath, freePort())), async (p) => {
      for (const { size, token, after } of bots) {
        await pageFrom(p, token, after); // warms the service up
        const cpuMs = await pageCpu(p, token, after);
        best.set(size, Math.min(best.get(size) ?? Infinity, cpuMs));
      }
    });
  }
  const base = best.get(SIZES[0])!;
  return SIZES.slice(1).map((size) => {
    const ratio = best.get(size)! / base;
    return {
      scenario: `GET /events?limit=${PAGE}, a bot in ${size} channels vs ${SIZES[0]}`,
      value: `${best.get(size)!.toFixed(2)} ms CPU/page`,
      baseline: `${base.toFixed(2)} ms CPU/page`,
      ratio: `${ratio.toFixed(2)}x`,
      target: `<= ${MAX_RATIO}x`,
      pass: ratio <= MAX_RATIO,
    };
  });
}

/** A bot in `size` new channels, with POSTS posts among them; its token, and where they begin. */
async function seedBotIn(ctx: Ctx, seeded: Seeded, size: number) {
  const bot = await createUser(ctx, {
    teamId: seeded.subject.team_id,
    name: `Bot of ${size}`,
    type: "bot",
  }, null);
  const { value } = await createToken(ctx, bot, { scopes: [...SCOPES], actor: null });
  const channels: string[] = [];
  let next = 0;
  const join = async () => {
    while (next < size) {
      const n = ++next;
      const name = `b${size}-${n}`;
      const channel = await createChannel(ctx, seeded.subject, { name, visibility: "public" });
      await addMember(ctx, seeded.subject, channel.id, () => Promise.resolve(bot.id));
      channels.push(channel.id);
    }
  };
  await Promise.all(Array.from({ length: 16 }, join));
  const after = placeAt(Date.now());
  for (let i = 0; i < POSTS; i++) {
    const body = `post ${i}`;
    await postMessage(ctx, seeded.subject, channels[i % channels.length], {
      ok: true,
      value: { body },
    });
  }
  return { token: value, after };
}

async function pageFrom(p: Proc, token: string, after: string) {
  const res = await fetch(`${p.url}/api/v1/events?limit=${PAGE}&after=${after}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (!res.ok) throw new Error(`GET /events: HTTP ${res.status}`);
  const body = await res.json();
  if (body.data.length !== PAGE) throw new Error(`a page of ${body.data.length} events`);
}

/** The CPU the service spends on a page, the mean of READS (CPU is counted in 10 ms ticks). */
async function pageCpu(p: Proc, token: string, after: string): Promise<number> {
  const cpu0 = p.cpuMs();
  for (let i = 0; i < READS; i++) await pageFrom(p, token, after);
  return (p.cpuMs() - cpu0) / READS;
}
