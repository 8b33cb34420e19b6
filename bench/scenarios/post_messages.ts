/**
 * Issues 3 and 55, posting: POST /channels/{channel}/messages in a channel with three matching
 * webhook subscriptions, against a bare handler making one atomic commit of one value per request
 * and against one committing the waiting requests' values together (the targets), and for context
 * against one committing one post's writes per request, which tells what committing a channel's
 * concurrent posts together gains, and one committing the waiting requests' posts together, which
 * tells what a post's keys cost and what the rest of a request does.
 */
import type { EventType } from "../../core/types.ts";
import { freePort, startBaseline, startService } from "../procs.ts";
import type { Receiver } from "../receiver.ts";
import { infoRow, ratioRow, type Row } from "../report.ts";
import { openCtx, seedSubscriptions, seedWorkspace, serviceEnv } from "../seed.ts";
import { measure, postScript, writeScript, type WrkResult } from "../wrk.ts";
import { type Bench, bestOf, scenarioDir, using } from "./context.ts";

const SUBSCRIPTIONS = 3;
const TEXT =
  "Bench message %d-%d: the quick brown fox jumps over the lazy dog, twice over, for size.";
const BODY_LUA = `string.format('{"body":"${TEXT}"}', tid, n)`;
/** The same body with a client_uuid unique to the run, the thread and the request. */
const KEYED_LUA =
  `string.format('{"client_uuid":"%08x-%04x-4000-8000-%012x","body":"${TEXT}"}', run, tid, n, tid, n)`;

interface Posted extends WrkResult {
  /** Deliveries that reached the receiver during the measured run. */
  delivered: number;
}

/**
 * Posts as fast as wrk can into a fresh workspace whose subscriptions listen for `events`.
 * Fresh each time: a previous run's undelivered backlog would load the next one.
 */
async function postInto(
  root: string,
  receiver: Receiver,
  events: EventType[],
  bodyLua = BODY_LUA,
): Promise<Posted> {
  const dir = await scenarioDir(root, "post");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  await seedSubscriptions(ctx, seeded, receiver.url, SUBSCRIPTIONS, events);
  ctx.kv.close();
  const path = `/api/v1/channels/${seeded.channel.id}/messages`;
  const auth = { Authorization: `Bearer ${seeded.token}` };
  const script = await writeScript(dir, "post", postScript(path, auth, bodyLua));
  return await using(startService(serviceEnv(kvPath, freePort())), async (p) => {
    const result = await measure({ url: `${p.url}${path}`, script }, {
      server: p,
      onStart: () => receiver.reset(),
    });
    return { ...result, delivered: receiver.count };
  });
}

/**
 * `name`: kv_commit (one set), kv_group_commit (one set each, up to 64 requests a commit),
 * kv_post_shape (one post's writes per commit, nothing else) or kv_post_group (a post's writes
 * each, up to 64 requests a commit).
 */
async function bareCommit(root: string, name: string): Promise<Posted> {
  const dir = await scenarioDir(root, "post-bare");
  const script = await writeScript(dir, "post", postScript("/messages", {}, BODY_LUA));
  const result = await using(
    startBaseline(name, [`${dir}/baseline.sqlite3`]),
    (p) => measure({ url: `${p.url}/messages`, script }, { server: p }),
  );
  return { ...result, delivered: 0 };
}

export async function postMessages({ root, receiver }: Bench): Promise<Row[]> {
  const { bare, group, shape, grouped, live, quiet, keyed } = await bestOf({
    bare: () => bareCommit(root, "kv_commit"),
    group: () => bareCommit(root, "kv_group_commit"),
    shape: () => bareCommit(root, "kv_post_shape"),
    grouped: () => bareCommit(root, "kv_post_group"),
    live: () => postInto(root, receiver, ["message.created"]),
    quiet: () => postInto(root, receiver, ["reaction.added"]),
    keyed: () => postInto(root, receiver, ["reaction.added"], KEYED_LUA),
  });
  const perPost = (live.delivered / (live.requests || 1)).toFixed(2);
  const info = (row: Row): Row => ({ ...row, target: "(info)", pass: null });
  return [
    ratioRow("POST messages, 3 subs, delivery on (a)", live, bare, 0.95),
    ratioRow("POST messages (a) vs group commit (<= 64 a commit)", live, group, 0.25),
    infoRow("  deliveries received meanwhile", String(live.delivered), "", `${perPost} per post`),
    infoRow("POST messages, delivery paused (b)", "n/a: the engine has no off switch"),
    info(ratioRow("POST messages, 3 subs not matching (no jobs)", quiet, bare, 0.8)),
    info(ratioRow("POST messages with a client_uuid, no jobs", keyed, bare, 0.8)),
    info(ratioRow("bare commit of one post's writes vs 1 set", shape, bare, 0.8)),
    info(ratioRow("POST messages, no jobs vs one post per commit", quiet, shape, 0.8)),
    info(ratioRow("bare posts' writes, <= 64 posts a commit, vs 1 set", grouped, bare, 0.8)),
    info(ratioRow("POST messages, no jobs vs posts' writes <= 64 a commit", quiet, grouped, 0.8)),
  ];
}
