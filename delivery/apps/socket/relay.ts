/**
 * Commands and interactions for an app connected to other instances only. A person's request
 * lands on any instance; the app's connections may all be on others. The instance taking the
 * request writes the call into the store and waits for its answer there; an instance holding a
 * connection of the app finds it through the socket signal, takes it (one of them: the take
 * deletes it, checked), sends it, and writes back the ack's payload or why there is none.
 */
import type { Ctx } from "../../../domain/context.ts";
import type { SocketAnswer, SocketCall } from "../../../core/app_records.ts";
import { keys } from "../../../kv/keys.ts";
import { signalApp } from "../../../kv/apps/socket_outbox.ts";

/** What became of an envelope a person waits on: the ack's payload, or why there is none. */
export type CallAnswer = { payload: unknown } | "not connected" | "closed" | "timed out";

/** A call no instance took within this long has no connection to go to (its holder is gone). */
const TAKE_MS = 1_000;
/** How often the waiting instance looks for the answer. */
const ANSWER_POLL_MS = 20;
/** How long a call or an answer is kept past its deadline, for a reader that is late. */
const KEEP_MS = 60_000;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

const answerOf = (a: SocketAnswer): CallAnswer => "failed" in a ? a.failed : a;

/** Writes the call for the app's other instances and waits for its answer, up to `timeoutMs`. */
export async function relayCall(
  ctx: Ctx,
  { appId, type, payload, timeoutMs }: {
    appId: string;
    type: SocketCall["type"];
    payload: unknown;
    timeoutMs: number;
  },
): Promise<CallAnswer> {
  const callId = crypto.randomUUID();
  const start = Date.now();
  const call: SocketCall = { type, payload, deadline: start + timeoutMs };
  const callKey = keys.socketCall(appId, callId);
  const answerKey = keys.socketAnswer(callId);
  const put = await signalApp(
    ctx.kv.atomic().set(callKey, call, { expireIn: timeoutMs + KEEP_MS }),
    appId,
  ).commit();
  if (!put.ok) return "not connected";
  let taken = false;
  while (Date.now() - start < timeoutMs) {
    await sleep(ANSWER_POLL_MS);
    const answer = await ctx.kv.get<SocketAnswer>(answerKey);
    if (answer.value) {
      await ctx.kv.delete(answerKey);
      return answerOf(answer.value);
    }
    if (taken || Date.now() - start < TAKE_MS) continue;
    // Not taken yet: withdrawn, unless an instance takes it at this very moment.
    const left = await ctx.kv.get(callKey);
    if (!left.value) taken = true;
    else if ((await ctx.kv.atomic().check(left).delete(callKey).commit()).ok) {
      return "not connected";
    }
  }
  await ctx.kv.delete(callKey);
  return "timed out";
}

/**
 * Takes the app's relayed calls, sends each through `send` (to a connection here) within what is
 * left of its time, and writes back what became of it.
 */
export async function takeCalls(
  ctx: Ctx,
  appId: string,
  send: (call: SocketCall, timeoutMs: number) => Promise<CallAnswer>,
): Promise<void> {
  for await (const entry of ctx.kv.list<SocketCall>({ prefix: keys.socketCalls(appId) })) {
    const took = await ctx.kv.atomic().check(entry).delete(entry.key).commit();
    if (!took.ok) continue;
    const callId = entry.key[2] as string;
    const left = entry.value.deadline - Date.now();
    const answered = left > 0 ? send(entry.value, left) : Promise.resolve("timed out" as const);
    const answerKey = keys.socketAnswer(callId);
    void answered.then((got) => {
      const record: SocketAnswer = typeof got === "string" ? { failed: got } : got;
      return ctx.kv.set(answerKey, record, { expireIn: KEEP_MS });
    }).catch(() =>
      // An answer past a value's 64 KiB: the person is told it was lost, not left waiting.
      ctx.kv.set(answerKey, { failed: "closed" } satisfies SocketAnswer, { expireIn: KEEP_MS })
    ).catch(() => {});
  }
}
