/**
 * Issue 28, data over time: `admin backup` of a store of 100,000 posts while posting goes on
 * (how long, how fast, and what it costs posting's rate against the same posting without it),
 * `admin export` and `admin import` in records a second, and what one message costs in the
 * store while its events are kept and after they expire (the README's retention table).
 */
import { freePort, type Proc, startService } from "../procs.ts";
import { infoRow, type Row } from "../report.ts";
import { openCtx, type Seeded, seedPosts, seedWorkspace, serviceEnv } from "../seed.ts";
import { post, targetOf } from "../pacing.ts";
import { scenarioDir, using } from "./context.ts";
import type { Bench } from "./context.ts";

const POSTS = 100_000;
const POSTERS = 8;
const WINDOW_MS = 3_000;
/** Posting during a backup may run this much slower than without one. */
const MIN_RATE_RATIO = 0.5;

export async function dataOverTime({ root }: Bench): Promise<Row[]> {
  const dir = await scenarioDir(root, "data");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  await seedPosts(ctx, seeded, POSTS, 64);
  ctx.kv.close();
  const storeBytes = await sizeOf(kvPath);
  const env = serviceEnv(kvPath, freePort());
  const backup = await using(startService(env), async (p) => {
    const quiet = await postFor(p, seeded, WINDOW_MS);
    const during = postWhile(p, seeded);
    const started = performance.now();
    const taken = await admin(env, "backup", "--to", `${dir}/backup.sqlite3`);
    const seconds = (performance.now() - started) / 1000;
    const busy = await during.stop();
    return { seconds, bytes: taken.bytes as number, quiet, busy };
  });
  const exported = await timed(() => admin(env, "export", "--to", `${dir}/export.jsonl`));
  const appKey = (await Deno.readTextFile(`${dir}/app.key`)).trim();
  await Deno.mkdir(`${dir}/target`);
  const target = { ...env, KV_PATH: `${dir}/target/kv.sqlite3`, APP_KEY: appKey };
  const imported = await timed(() => admin(target, "import", "--from", `${dir}/export.jsonl`));
  const expiredBytes = await withoutEvents(env, `${dir}/backup.sqlite3`, dir);
  const mb = backup.bytes / 1e6;
  const rateRatio = backup.busy / backup.quiet;
  return [
    {
      scenario: `admin backup of ${POSTS / 1000}k posts while posting (${POSTERS} posters)`,
      value: `${backup.seconds.toFixed(1)} s, ${(mb / backup.seconds).toFixed(0)} MB/s`,
      baseline: `posts/s ${backup.busy.toFixed(0)} during / ${backup.quiet.toFixed(0)} without`,
      ratio: `${rateRatio.toFixed(2)}x`,
      target: `>= ${MIN_RATE_RATIO}x`,
      pass: rateRatio >= MIN_RATE_RATIO,
      cpu: `copy ${mb.toFixed(0)} MB of a ${(storeBytes / 1e6).toFixed(0)} MB store file`,
    },
    infoRow(
      "admin export / import",
      `${rate(exported.out.records, exported.seconds)} / ${
        rate(imported.out.records, imported.seconds)
      } records/s`,
      `${exported.out.records} records, ${exported.seconds.toFixed(1)} / ${
        imported.seconds.toFixed(1)
      } s`,
    ),
    infoRow(
      "store bytes per message, events kept / expired",
      `${(backup.bytes / POSTS / 1024).toFixed(1)} / ${
        (expiredBytes / POSTS / 1024).toFixed(1)
      } KiB`,
      "compacted copies",
    ),
  ];
}

const rate = (n: number, seconds: number) => (n / seconds).toFixed(0);

async function sizeOf(path: string): Promise<number> {
  const wal = await Deno.stat(`${path}-wal`).then((s) => s.size, () => 0);
  return (await Deno.stat(path)).size + wal;
}

/** Posts with POSTERS in a loop for `ms`; posts a second. */
async function postFor(p: Proc, seeded: Seeded, ms: number): Promise<number> {
  const posting = postWhile(p, seeded);
  await new Promise((r) => setTimeout(r, ms));
  return await posting.stop();
}

/** Posts with POSTERS in a loop until stopped; then posts a second over that time. */
function postWhile(p: Proc, seeded: Seeded) {
  const to = targetOf(p, seeded);
  let going = true;
  let count = 0;
  const started = performance.now();
  const poster = async (k: number) => {
    for (let n = 0; going; n++) {
      await post(to, k * 1_000_000 + n);
      count++;
    }
  };
  const all = Promise.all(Array.from({ length: POSTERS }, (_, k) => poster(k)));
  return {
    async stop() {
      going = false;
      await all;
      return count / ((performance.now() - started) / 1000);
    },
  };
}

async function timed<T>(fn: () => Promise<T>): Promise<{ out: T; seconds: number }> {
  const started = performance.now();
  const out = await fn();
  return { out, seconds: (performance.now() - started) / 1000 };
}

/** Runs `deno task admin` as an operator would; its JSON answer. */
// deno-lint-ignore no-explicit-any
async function admin(env: Record<string, string>, ...args: string[]): Promise<any> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "admin", ...args],
    cwd: new URL("../..", import.meta.url).pathname,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`admin ${args[0]}: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** The size of a compacted copy of the store `from` once its events (and indexes) expired. */
async function withoutEvents(env: Record<string, string>, from: string, dir: string) {
  await Deno.copyFile(from, `${dir}/expired.sqlite3`);
  const kv = await Deno.openKv(`${dir}/expired.sqlite3`);
  const expiring = ["events", "team_events", "open_events", "channel_events", "team_stream"];
  for (const kind of expiring) {
    let op = kv.atomic();
    let n = 0;
    for await (const e of kv.list({ prefix: [kind] })) {
      op.delete(e.key);
      if (++n % 500 === 0) {
        await op.commit();
        op = kv.atomic();
      }
    }
    await op.commit();
  }
  kv.close();
  const scratch = { ...env, KV_PATH: `${dir}/expired.sqlite3` };
  return (await admin(scratch, "backup", "--to", `${dir}/expired-compact.sqlite3`)).bytes as number;
}
