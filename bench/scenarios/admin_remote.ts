/**
 * Issue 67: the admin CLI through `ADMIN_URL` adds at most one round trip to the same command run
 * on the store. The same command (`user:list`, a read of a seeded team, and `team:create`, a
 * write) runs here on the service's store file as the local CLI does, and as a signed request to
 * the service as the remote CLI sends it; what the remote run costs beyond the local one, less one
 * round trip to the same service (`GET /up`), is the admin path's own work: checking the signature,
 * taking the nonce (one commit), the JSON both ways.
 */
import type { Ctx } from "../../domain/context.ts";
import { AppSender } from "../../delivery/apps/sender.ts";
import { signAdminRequest } from "../../domain/data/admin_requests.ts";
import { COMMANDS } from "../../cli/registry.ts";
import { createHash } from "node:crypto";
import { freePort, startService } from "../procs.ts";
import { infoRow, limitRow, type Row } from "../report.ts";
import { openCtx, seedWorkspace, serviceEnv } from "../seed.ts";
import { now, percentile } from "../pacing.ts";
import { type Bench, scenarioDir, using } from "./context.ts";

const RUNS = 300;
/** What checking a signature, one commit and JSON may cost on these machines, p50. */
const BEYOND_ROUND_TRIP_MS = 2;

type Flags = Record<string, string>;

/** The command run on the store, as `deno task admin` does without ADMIN_URL. */
async function local(ctx: Ctx, name: string, flags: Flags) {
  const calls = new AppSender();
  try {
    const command = COMMANDS.get(name)!;
    if ("onFile" in command) throw new Error(`${name} works on a file, not the store`);
    await command.run(ctx, flags, calls, () => {});
  } finally {
    await calls.close();
  }
}

/** The command as a signed request to the service, as `deno task admin` sends it with ADMIN_URL. */
async function remote(ctx: Ctx, url: string, name: string, flags: Flags) {
  const body = JSON.stringify({ flags, files: {} });
  const path = `/admin/v1/${name}`;
  const bodySha256 = createHash("sha256").update(body).digest("hex");
  const headers = signAdminRequest(ctx.keyring, { method: "POST", path, bodySha256, flags: "" });
  const res = await fetch(`${url}${path}`, { method: "POST", headers, body });
  if (!res.ok) throw new Error(`${name}: ${res.status} ${await res.text()}`);
  await res.body?.cancel();
}

async function roundTrip(url: string) {
  const res = await fetch(`${url}/up`);
  await res.body?.cancel();
}

/** p50 of each way, taking turns run by run so that interference falls on all alike. */
async function medians(ways: Record<string, () => Promise<void>>) {
  const times = new Map(Object.keys(ways).map((k) => [k, [] as number[]]));
  for (let i = 0; i < RUNS; i++) {
    for (const [name, way] of Object.entries(ways)) {
      const start = now();
      await way();
      times.get(name)!.push(now() - start);
    }
  }
  return new Map([...times].map(([k, t]) => [k, percentile(t.sort((a, b) => a - b), 0.5)]));
}

export async function adminRemote({ root }: Bench): Promise<Row[]> {
  const dir = await scenarioDir(root, "admin-remote");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  const read = { team: seeded.subject.team_id };
  const write = { name: "Bench" };
  try {
    return await using(startService(serviceEnv(kvPath, freePort())), async (proc) => {
      const p50 = await medians({
        rtt: () => roundTrip(proc.url),
        localRead: () => local(ctx, "user:list", read),
        remoteRead: () => remote(ctx, proc.url, "user:list", read),
        localWrite: () => local(ctx, "team:create", write),
        remoteWrite: () => remote(ctx, proc.url, "team:create", write),
      });
      const [rtt, lr, rr, lw, rw] = ["rtt", "localRead", "remoteRead", "localWrite", "remoteWrite"]
        .map((k) => p50.get(k)!);
      return [
        infoRow(
          "admin command p50, on the store / through ADMIN_URL / GET /up round trip",
          `read ${lr.toFixed(2)} / ${rr.toFixed(2)}, write ${lw.toFixed(2)} / ${rw.toFixed(2)}, ` +
            `rtt ${rtt.toFixed(2)} ms`,
        ),
        limitRow(
          "admin read through ADMIN_URL beyond one round trip, p50",
          rr - lr - rtt,
          BEYOND_ROUND_TRIP_MS,
          "ms",
        ),
        limitRow(
          "admin write through ADMIN_URL beyond one round trip, p50",
          rw - lw - rtt,
          BEYOND_ROUND_TRIP_MS,
          "ms",
        ),
      ];
    });
  } finally {
    ctx.kv.close();
  }
}
