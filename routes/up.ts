import type { Context } from "hono";
import { keys } from "../kv/keys.ts";

const PROBE_TIMEOUT_MS = 2_000;

/** GET /up: 200 when the service and its KV answer, 503 when KV does not. */
export const upHandler = (kv: Deno.Kv) => async (c: Context) => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      kv.get(keys.probe()),
      new Promise((_, reject) => {
        timer = setTimeout(reject, PROBE_TIMEOUT_MS, new Error("timeout"));
      }),
    ]);
    return c.json({ status: "ok" });
  } catch {
    return c.json({ status: "unavailable", message: "The KV store does not answer." }, 503);
  } finally {
    // Probes arrive every few seconds: a timer left behind by each would pile up.
    clearTimeout(timer);
  }
};
