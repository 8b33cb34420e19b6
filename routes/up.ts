import type { Context } from "hono";

const PROBE_TIMEOUT_MS = 2_000;

/** GET /up: 200 when the service and its KV answer, 503 when KV does not. */
export const upHandler = (kv: Deno.Kv) => async (c: Context) => {
  try {
    await Promise.race([
      kv.get(["up"]),
      new Promise((_, reject) => setTimeout(reject, PROBE_TIMEOUT_MS, new Error("timeout"))),
    ]);
    return c.json({ status: "ok" });
  } catch {
    return c.json({ status: "unavailable", message: "The KV store does not answer." }, 503);
  }
};
