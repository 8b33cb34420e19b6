/**
 * An agent streaming replies (chat.startStream, appendStream, stopStream), as many at once as it
 * is told, each appending at a steady rate: a process of its own, so that the bench's timing is
 * not its victim. Each addition's text ends with when it was sent (`now()`), for the reader's
 * arrival time. Prints `{ appends, failed }` as JSON when done.
 * `<base url> <bot token> <channel id> <thread ts> <recipient> <team> <streams> <per second>
 * <seconds>`.
 */
import { now } from "./pacing.ts";

const [url, token, channel, threadTs, recipient, team, streams, rate, seconds] = Deno.args;
const perSecond = Number(rate);
const deadline = performance.now() + Number(seconds) * 1000;
/** Appends per stream before it stops and another starts: a reply of a few seconds. */
const APPENDS_PER_REPLY = 25;
const counts = { appends: 0, failed: 0 };

async function call(method: string, args: Record<string, unknown>) {
  const res = await fetch(`${url}/api/slack/${method}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ channel, ...args }),
  });
  const body = await res.json();
  if (!body.ok) throw new Error(`${method}: ${body.error}`);
  return body;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One stream after another until the deadline, `perSecond` additions a second. */
async function streamer(first: number) {
  await sleep(first);
  while (performance.now() < deadline) {
    const { ts } = await call("chat.startStream", {
      thread_ts: threadTs,
      recipient_user_id: recipient,
      recipient_team_id: team,
    });
    for (let i = 0; i < APPENDS_PER_REPLY && performance.now() < deadline; i++) {
      const started = performance.now();
      try {
        await call("chat.appendStream", { ts, markdown_text: `word ${i} |${now()};` });
        counts.appends++;
      } catch {
        counts.failed++;
      }
      await sleep(Math.max(0, 1000 / perSecond - (performance.now() - started)));
    }
    await call("chat.stopStream", { ts });
  }
}

const n = Number(streams);
// Spread over one interval, as independent agents would be.
await Promise.all(Array.from({ length: n }, (_, i) => streamer(i * 1000 / perSecond / n)));
console.log(JSON.stringify(counts));
