/**
 * Issue 33: GET /channels for members of 10, 2,000 and 5,000 channels, whole and by pages of
 * 100, against a bare read of the same store (list the index, getMany the channels, JSON): CPU
 * per channel listed, at 32 connections and at one.
 */
import { freePort, startBaseline, startService } from "../procs.ts";
import { infoRow, type Row } from "../report.ts";
import { openCtx, seedMemberOf, seedWorkspace, serviceEnv } from "../seed.ts";
import { measure, type WrkResult } from "../wrk.ts";
import { type Bench, bestOf, scenarioDir, using } from "./context.ts";

const SIZES = [10, 2_000, 5_000];
const PAGE = 100;
/** What a channel listed may cost beyond the bare read. */
const OVER_BARE_US = 5;

const ONE = { threads: 1, connections: 1 };

export async function channelList({ root }: Bench): Promise<Row[]> {
  const dir = await scenarioDir(root, "channel-list");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  const members = [];
  for (const size of SIZES) members.push({ size, ...await seedMemberOf(ctx, seeded, size) });
  ctx.kv.close();

  const rows: Row[] = [];
  for (const { size, token, userId } of members) {
    const auth = { Authorization: `Bearer ${token}` };
    // A page from the middle of the list: the cursor of the first page reaches it.
    const firstPage = size > PAGE ? await cursorAfterFirstPage(kvPath, token) : null;
    const loads = size === 5_000 ? [undefined, ONE] : [undefined];
    for (const load of loads) {
      const at = load ? "1 connection" : "32 connections";
      const runs: Record<string, () => Promise<WrkResult>> = {
        bare: () =>
          using(
            startBaseline("kv_channel_list", [kvPath]),
            (p) => measure({ url: `${p.url}/channels/${userId}` }, { server: p, load }),
          ),
        service: () =>
          using(
            startService(serviceEnv(kvPath, freePort())),
            (p) => measure({ url: `${p.url}/api/v1/channels`, headers: auth }, { server: p, load }),
          ),
      };
      if (firstPage) {
        const url = `/api/v1/channels?limit=${PAGE}&cursor=${firstPage}`;
        runs.paged = () =>
          using(
            startService(serviceEnv(kvPath, freePort())),
            (p) => measure({ url: `${p.url}${url}`, headers: auth }, { server: p, load }),
          );
      }
      const { service, bare, paged } = await bestOf(runs);
      rows.push(perChannelRow(`GET /channels, ${size} channels, ${at}`, service, bare, size));
      if (paged) {
        const perChannel = paged.cpuUs / PAGE;
        rows.push(infoRow(
          `  the same, page 2 of ${PAGE}`,
          `${perChannel.toFixed(1)} us/channel`,
          `${paged.rate.toFixed(0)} req/s`,
          `${(paged.cpuUs / 1000).toFixed(1)} ms/req`,
        ));
      }
    }
  }
  return rows;
}

/** A row of CPU per channel listed against the bare read's: passes within OVER_BARE_US of it. */
function perChannelRow(scenario: string, service: WrkResult, bare: WrkResult, size: number): Row {
  const svc = service.cpuUs / size;
  const base = bare.cpuUs / size;
  return {
    scenario,
    value: `${svc.toFixed(1)} us/channel`,
    baseline: `${base.toFixed(1)} us/channel`,
    ratio: `+${(svc - base).toFixed(1)} us`,
    target: `<= +${OVER_BARE_US} us`,
    pass: Number.isFinite(svc - base) ? svc - base <= OVER_BARE_US : null,
    cpu: `${service.rate.toFixed(0)} / ${bare.rate.toFixed(0)} req/s, p99 ${
      service.p99Ms.toFixed(0)
    } / ${bare.p99Ms.toFixed(0)} ms`,
  };
}

/** The cursor the first page of the member's list hands out, from a service started for it. */
async function cursorAfterFirstPage(kvPath: string, token: string): Promise<string> {
  return await using(startService(serviceEnv(kvPath, freePort())), async (p) => {
    const res = await fetch(`${p.url}/api/v1/channels?limit=${PAGE}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const body = await res.json();
    return encodeURIComponent(body.meta.next_cursor);
  });
}
