/**
 * Issue 65, item 4: one Socket Mode connection flooding frames (acks of envelopes it never held,
 * text that is not JSON, frames near 1 MiB), connecting again each time it is closed, must not
 * delay the HTTP API: `/up`'s p99 while it floods, against the same service's quiet p99 in the
 * same run. The flooder is a process of its own, so that the bench's own timing is not its victim.
 */
import { createAppFromManifest } from "../../domain/apps/declared.ts";
import { createAppToken } from "../../domain/apps/socket/app_tokens.ts";
import { freePort } from "../procs.ts";
import { infoRow, limitRow, type Row } from "../report.ts";
import { openCtx, serviceEnv } from "../seed.ts";
import { now, onSchedule, percentile } from "../pacing.ts";
import { startService } from "../procs.ts";
import { type Bench, scenarioDir, using } from "./context.ts";

const PROBES = 600;
const PROBES_PER_SECOND = 50;

/** `/up`'s round trips at a steady rate, sorted (ms). */
async function upTimes(url: string): Promise<number[]> {
  const times = await onSchedule(PROBES, PROBES_PER_SECOND, async () => {
    const start = now();
    await (await fetch(`${url}/up`)).body?.cancel();
    return now() - start;
  });
  return times.sort((a, b) => a - b);
}

export async function socketFlood({ root }: Bench): Promise<Row[]> {
  const dir = await scenarioDir(root, "socket-flood");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const { app } = await createAppFromManifest(
    ctx,
    JSON.stringify({
      display_information: { name: "Flooder" },
      settings: { socket_mode_enabled: true },
    }),
    null,
  );
  const { token } = await createAppToken(ctx, { appId: app.id, name: null, actor: null });
  ctx.kv.close();
  // The default rate limit, as deployed: it is what bounds how often a flooder reconnects.
  const { INTEGRATIONS_API_RATE_LIMIT: _, ...env } = serviceEnv(kvPath, freePort());
  return await using(startService(env), async (proc) => {
    await upTimes(proc.url); // warm-up
    const quiet = await upTimes(proc.url);
    const flooder = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-net",
        new URL("../socket_flooder.ts", import.meta.url).pathname,
        proc.url,
        token,
        Deno.env.get("FLOOD_KINDS") ?? "ack,text,big",
      ],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    let last = { sent: 0, closed: 0 };
    const counted = flooder.stdout.pipeThrough(new TextDecoderStream()).pipeTo(
      new WritableStream({
        write(chunk) {
          const line = chunk.trim().split("\n").at(-1);
          if (line) last = JSON.parse(line);
        },
      }),
    );
    try {
      await new Promise((r) => setTimeout(r, 1000));
      const before = last;
      const flooded = await upTimes(proc.url);
      const after = last;
      const p99 = (xs: number[]) => percentile(xs, 0.99);
      return [
        infoRow(
          `/up p99 @${PROBES_PER_SECOND}/s: one connection flooding / quiet`,
          `${p99(flooded).toFixed(2)} / ${p99(quiet).toFixed(2)} ms`,
        ),
        infoRow(
          "flood: frames sent, connections closed on it, over the measurement",
          `${after.sent - before.sent} / ${after.closed - before.closed}`,
        ),
        limitRow(
          "/up p99 while one connection floods, as a share of quiet",
          p99(flooded) / p99(quiet),
          2,
          "x",
        ),
      ];
    } finally {
      flooder.kill("SIGKILL");
      await flooder.status;
      await counted.catch(() => {});
    }
  });
}
