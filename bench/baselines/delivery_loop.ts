/**
 * Baseline of webhook delivery: per delivery, one HMAC-SHA256 signature, one fetch POST to the
 * receiver and one KV commit (the Delivery record), `concurrency` at a time. Prints
 * `{ deliveries, ms, cpuUs }` as JSON (cpuUs: the CPU time of the loop, all threads).
 */
import { cpuUsage } from "node:process";

const [receiverUrl, kvPath, countArg, concurrencyArg] = Deno.args;
const count = Number(countArg);
const concurrency = Number(concurrencyArg);
const kv = await Deno.openKv(kvPath);
const enc = new TextEncoder();
const key = await crypto.subtle.importKey(
  "raw",
  enc.encode(`whsec_${"x".repeat(32)}`),
  { name: "HMAC", hash: "SHA-256" },
  false,
  ["sign"],
);
const client = Deno.createHttpClient({});

function envelope(n: number): string {
  return JSON.stringify({
    id: crypto.randomUUID(),
    type: "message.created",
    created_at: new Date().toISOString(),
    data: {
      id: crypto.randomUUID(),
      channel_id: crypto.randomUUID(),
      body:
        `Bench message ${n}: the quick brown fox jumps over the lazy dog, twice over, for size.`,
      type: "standard",
      author: { id: crypto.randomUUID(), name: "Bench Admin", type: "human" },
      reply_to_id: null,
      thread_root_id: null,
      sent_to_channel: false,
      reactions: [],
      created_at: new Date().toISOString(),
      edited_at: null,
    },
  });
}

async function deliverOne(n: number): Promise<void> {
  const body = envelope(n);
  const t = Math.floor(Date.now() / 1000);
  const mac = await crypto.subtle.sign("HMAC", key, enc.encode(`${t}.${body}`));
  const res = await fetch(receiverUrl, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "X-Service-Signature": `t=${t},v1=${new Uint8Array(mac).toHex()}`,
    },
    body,
    client,
  });
  await res.body?.cancel();
  const id = crypto.randomUUID();
  await kv.atomic().set(["deliveries", "sub", id], {
    id,
    succeeded: res.ok,
    response_status: res.status,
    error: null,
    created_at: new Date().toISOString(),
  }).commit();
}

let next = 0;
const cpuBefore = cpuUsage();
const started = performance.now();
await Promise.all(Array.from({ length: concurrency }, async () => {
  while (next < count) await deliverOne(++next);
}));
const ms = performance.now() - started;
const cpu = cpuUsage(cpuBefore);
console.log(JSON.stringify({ deliveries: count, ms, cpuUs: cpu.user + cpu.system }));
client.close();
kv.close();
