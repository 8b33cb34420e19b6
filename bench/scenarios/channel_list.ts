/**
 * Issues 33 and 44: GET /channels for members of 10, 200, 2,000 and 20,000 channels. A whole list
 * costs CPU per channel listed (at most 5 us at 2,000 and 20,000; the bare read of the same
 * store, listing the index, reading the channels and making JSON, beside it); a page of 100 what
 * the member of 200's page of 100 costs (at most 1.5x), through the REST API and Slack's
 * conversations.list; and the whole list of
 * 2,000 at most 50 times reading one channel. At 32 connections; the 20,000, whose bare read
 * takes most of a second, at one.
 */
import { freePort, startBaseline, startService } from "../procs.ts";
import { infoRow, type Row } from "../report.ts";
import { openCtx, seedMemberOf, seedWorkspace, serviceEnv } from "../seed.ts";
import { measure, type WrkResult } from "../wrk.ts";
import { type Bench, bestOf, scenarioDir, using } from "./context.ts";

const SIZES = [10, 200, 2_000, 20_000];
/** The member whose page of 100 is the baseline: a full page, with a cursor to the next. */
const SMALL = 200;
/** The sizes whose lists have a target; the smaller show what a request costs anyway. */
const TARGETED = [2_000, 20_000];
const PAGE = 100;
const MAX_US_PER_CHANNEL = 5;
const MAX_PAGE_RATIO = 1.5;
/** The outside check: the whole list of 2,000 against reading one channel. */
const MAX_LIST_OVER_ONE = 50;

const ONE = { threads: 1, connections: 1 };

interface Measured {
  whole: WrkResult;
  bare: WrkResult;
  page: WrkResult;
  slack?: WrkResult;
}

export async function channelList({ root }: Bench): Promise<Row[]> {
  const dir = await scenarioDir(root, "channel-list");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  const members = [];
  for (const size of SIZES) members.push({ size, ...await seedMemberOf(ctx, seeded, size, 16) });
  ctx.kv.close();

  const { one } = await bestOf({
    one: () =>
      using(startService(serviceEnv(kvPath, freePort())), (p) =>
        measure({
          url: `${p.url}/api/v1/channels/${seeded.channel.id}`,
          headers: { Authorization: `Bearer ${seeded.token}` },
        }, { server: p })),
  });
  const rows: Row[] = [];
  const measured = new Map<number, Measured>();
  const firstMs = new Map<number, number>();
  for (const { size, token, userId } of members) {
    const auth = { Authorization: `Bearer ${token}` };
    const load = size === SIZES.at(-1) ? ONE : undefined;
    // Pages are measured at 32 connections whatever the size: they are what a page costs.
    // One request lists the member's channels before the measurement, which is of the lists
    // as kept: the first after a change costs a listing (reported on its own).
    const service = (path: string, at: typeof load) => () =>
      using(startService(serviceEnv(kvPath, freePort())), async (p) => {
        const t0 = performance.now();
        await (await fetch(`${p.url}${path}`, { headers: auth })).arrayBuffer();
        firstMs.set(size, Math.min(firstMs.get(size) ?? Infinity, performance.now() - t0));
        return await measure({ url: `${p.url}${path}`, headers: auth }, { server: p, load: at });
      });
    const runs: Record<string, () => Promise<WrkResult>> = {
      bare: () =>
        using(
          startBaseline("kv_channel_list", [kvPath]),
          (p) => measure({ url: `${p.url}/channels/${userId}` }, { server: p, load }),
        ),
      whole: service("/api/v1/channels", load),
      page: service(`/api/v1/channels?limit=${PAGE}`, undefined),
    };
    // Slack's conversations.list, which Bolt apps page through, on the same path.
    if (TARGETED.includes(size) || size === SMALL) {
      runs.slack = service(`/api/slack/conversations.list?limit=${PAGE}`, undefined);
    }
    const m = await bestOf(runs) as unknown as Measured;
    measured.set(size, m);
    const scenario = `GET /channels, ${size} channels, ${load ? "1 connection" : "32 connections"}`;
    rows.push(perChannelRow(scenario, m.whole, m.bare, size));
  }
  const samePage = measured.get(SMALL)!.page;
  for (const size of TARGETED) {
    const { page, slack } = measured.get(size)!;
    rows.push(cpuRatioRow(
      `GET /channels?limit=${PAGE}, ${size} channels vs ${SMALL}`,
      page,
      samePage,
      MAX_PAGE_RATIO,
    ));
    rows.push(cpuRatioRow(
      `conversations.list?limit=${PAGE}, ${size} channels vs ${SMALL}`,
      slack!,
      measured.get(SMALL)!.slack!,
      MAX_PAGE_RATIO,
    ));
  }
  for (const size of TARGETED) {
    rows.push(infoRow(
      `  the first request after a change, ${size} channels: it lists them`,
      `${firstMs.get(size)!.toFixed(0)} ms`,
    ));
  }
  rows.push(infoRow(
    `  the same page at ${SIZES[0]} channels (all ${SIZES[0]})`,
    `${(measured.get(SIZES[0])!.page.cpuUs / 1000).toFixed(2)} ms CPU/req`,
  ));
  rows.push(cpuRatioRow(
    `GET /channels, ${TARGETED[0]} channels vs GET /channels/{id}`,
    measured.get(TARGETED[0])!.whole,
    one,
    MAX_LIST_OVER_ONE,
  ));
  return rows;
}

/** CPU per channel listed, against an absolute target; the bare read's beside it. */
function perChannelRow(scenario: string, service: WrkResult, bare: WrkResult, size: number): Row {
  const svc = service.cpuUs / size;
  const base = bare.cpuUs / size;
  return {
    scenario,
    value: `${svc.toFixed(2)} us/channel`,
    baseline: `bare ${base.toFixed(2)} us/channel`,
    ratio: `${(svc / base).toFixed(2)}x`,
    target: TARGETED.includes(size) ? `<= ${MAX_US_PER_CHANNEL} us` : "",
    pass: !TARGETED.includes(size) || !Number.isFinite(svc) ? null : svc <= MAX_US_PER_CHANNEL,
    cpu: `${service.rate.toFixed(0)} / ${bare.rate.toFixed(0)} req/s, p99 ${
      service.p99Ms.toFixed(0)
    } / ${bare.p99Ms.toFixed(0)} ms`,
  };
}

/** CPU per request of one against another's, within `max` times. */
function cpuRatioRow(scenario: string, a: WrkResult, b: WrkResult, max: number): Row {
  const ratio = a.cpuUs / b.cpuUs;
  return {
    scenario,
    value: `${(a.cpuUs / 1000).toFixed(2)} ms CPU/req`,
    baseline: `${(b.cpuUs / 1000).toFixed(2)} ms CPU/req`,
    ratio: `${ratio.toFixed(2)}x`,
    target: `<= ${max}x`,
    pass: Number.isFinite(ratio) ? ratio <= max : null,
    cpu: `${a.rate.toFixed(0)} / ${b.rate.toFixed(0)} req/s`,
  };
}
