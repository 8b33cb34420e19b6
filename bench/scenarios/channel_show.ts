/** Issue 2: an authenticated GET /channels/{channel} against a bare one-KV-get handler. */
import { freePort, startBaseline, startService } from "../procs.ts";
import { ratioRow, type Row } from "../report.ts";
import { openCtx, seedWorkspace, serviceEnv } from "../seed.ts";
import { measure } from "../wrk.ts";
import { type Bench, bestOf, scenarioDir, using } from "./context.ts";

export async function channelShow({ root }: Bench): Promise<Row[]> {
  const dir = await scenarioDir(root, "channel-show");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  ctx.kv.close();

  const { service, bare } = await bestOf({
    bare: () =>
      using(
        startBaseline("kv_get", [`${dir}/baseline.sqlite3`]),
        (p) => measure({ url: `${p.url}/channels/x` }, { server: p }),
      ),
    service: () =>
      using(startService(serviceEnv(kvPath, freePort())), (p) =>
        measure({
          url: `${p.url}/api/v1/channels/${seeded.channel.id}`,
          headers: { Authorization: `Bearer ${seeded.token}` },
        }, { server: p })),
  });
  return [ratioRow("GET /channels/{id}", service, bare, 0.5)];
}
