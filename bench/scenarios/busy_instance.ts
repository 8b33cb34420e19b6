/**
 * Issue 58, a busy instance beside an idle one on one store: the busy one's window (one slot,
 * WEBHOOKS_MAX_IN_MEMORY=1) is held by a receiver that answers after the timeout, and 60 posts are
 * made through it to a channel whose receiver answers at once. The first attempts it can't start
 * are taken by the idle instance: from each post's answer to its delivery, p99 under 2 s, none
 * missing. (At 0ad9d63 the busy instance made them all itself, p99 4.9 s.)
 */
import { createChannel } from "../../domain/channels/channels.ts";
import { createWebhook } from "../../domain/webhooks/webhooks.ts";
import { now } from "../pacing.ts";
import { freePort, startService } from "../procs.ts";
import { Receiver } from "../receiver.ts";
import { infoRow, limitRow, type Row } from "../report.ts";
import { openCtx, seedWorkspace, serviceEnv } from "../seed.ts";
import { type Bench, scenarioDir, using } from "./context.ts";

const POSTS = 60;
const TIMEOUT_S = 10;

export async function busyInstance({ root }: Bench): Promise<Row[]> {
  const dir = await scenarioDir(root, "busy-instance");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  const held = await createChannel(ctx, seeded.subject, { name: "held", visibility: "public" });
  const late = new Receiver(() => (TIMEOUT_S + 1) * 1000).start();
  const fast = new Receiver().start();
  const subscribe = (url: string, channel: string) =>
    createWebhook(ctx, seeded.subject, {
      name: url,
      url,
      events: ["message.created"],
      channel_ids: [channel],
    });
  await subscribe(late.url, held.id);
  await subscribe(fast.url, seeded.channel.id);
  ctx.kv.close();
  const env = { ...serviceEnv(kvPath, 0), WEBHOOKS_TIMEOUT: String(TIMEOUT_S) };
  const start = (extra: Record<string, string> = {}) =>
    startService({ ...env, PORT: String(freePort()), ...extra });
  try {
    return await using(
      start(),
      () =>
        using(start({ WEBHOOKS_MAX_IN_MEMORY: "1" }), async (busy) => {
          const post = (channel: string, body: string) =>
            fetch(`${busy.url}/api/v1/channels/${channel}/messages`, {
              method: "POST",
              headers: {
                Authorization: `Bearer ${seeded.token}`,
                "Content-Type": "application/json",
              },
              body: JSON.stringify({ body }),
            }).then(async (r) => ({ at: now(), id: (await r.json()).data.id as string }));
          await post(held.id, "held");
          await late.waitFor(1, 5_000);
          const answered: { at: number; id: string }[] = [];
          for (let i = 0; i < POSTS; i++) answered.push(await post(seeded.channel.id, `post ${i}`));
          await fast.waitFor(POSTS, 15_000);
          const waits = answered.flatMap(({ at, id }) => {
            const arrived = fast.arrivals.get(id)?.[0];
            return arrived === undefined ? [] : [arrived - at];
          }).sort((a, b) => a - b);
          const missing = POSTS - waits.length;
          const p99 = waits.length ? waits[Math.ceil(waits.length * 0.99) - 1] : Infinity;
          const p50 = waits.length ? waits[Math.floor(waits.length / 2)] : Infinity;
          return [
            limitRow("busy instance beside an idle one: post → delivered p99", p99, 2_000, "ms"),
            infoRow("  p50", `${p50.toFixed(0)} ms`),
            {
              scenario: "  deliveries missing",
              value: String(missing),
              baseline: "",
              ratio: "",
              target: "0",
              pass: missing === 0,
            },
          ];
        }),
    );
  } finally {
    await late.stop();
    await fast.stop();
  }
}
