/**
 * Issue 3, reading: page 1 of a 10,000-message channel against a bare get + list handler, then
 * page 150 and a cursor at the same depth against page 1.
 */
import { freePort, type Proc, startBaseline, startService } from "../procs.ts";
import { ratioRow, type Row } from "../report.ts";
import { openCtx, type Seeded, seedMessages, seedWorkspace, serviceEnv } from "../seed.ts";
import { measure } from "../wrk.ts";
import { type Bench, bestOf, scenarioDir, using } from "./context.ts";

const MESSAGES = 10_000;
const PER_PAGE = 50;
const DEEP_PAGE = 150;

type Query = (proc: Proc) => Promise<string>;

async function getPage(proc: Proc, path: string, token: string, query: string) {
  const res = await fetch(`${proc.url}${path}${query}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  const body = await res.json();
  if (!res.ok) throw new Error(`GET ${path}${query}: HTTP ${res.status}`);
  return body;
}

export async function readMessages({ root }: Bench): Promise<Row[]> {
  const dir = await scenarioDir(root, "read");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  await seedMessages(ctx, seeded, MESSAGES);
  ctx.kv.close();

  const path = `/api/v1/channels/${seeded.channel.id}/messages`;
  const page = (query: Query) => () =>
    using(startService(serviceEnv(kvPath, freePort())), async (p) => {
      const q = await query(p);
      await checkFullPage(p, path, seeded, q);
      const headers = { Authorization: `Bearer ${seeded.token}` };
      return await measure({ url: `${p.url}${path}${q}`, headers }, { server: p });
    });
  // The cursor that starts page DEEP_PAGE, as the API hands it out on the page before it.
  const deepCursor: Query = async (p) => {
    const before = await getPage(p, path, seeded.token, `?page=${DEEP_PAGE - 1}`);
    return `?cursor=${encodeURIComponent(before.meta.next_cursor)}`;
  };
  const { bare, page1, deep, cursor } = await bestOf({
    bare: () =>
      using(
        startBaseline("kv_page", [`${dir}/baseline.sqlite3`]),
        (p) => measure({ url: `${p.url}/messages` }, { server: p }),
      ),
    page1: page(() => Promise.resolve("")),
    deep: page(() => Promise.resolve(`?page=${DEEP_PAGE}`)),
    cursor: page(deepCursor),
  });
  return [
    ratioRow("GET messages page 1 (10k msgs)", page1, bare, 0.7),
    ratioRow(`GET messages ?page=${DEEP_PAGE} vs page 1`, deep, page1, 0.5),
    ratioRow(`GET messages ?cursor= (page ${DEEP_PAGE}) vs page 1`, cursor, page1, 0.5),
  ];
}

/** A measured page must be a full one: a fast empty page would prove nothing. */
async function checkFullPage(p: Proc, path: string, seeded: Seeded, query: string) {
  const body = await getPage(p, path, seeded.token, query);
  if (body.data?.length !== PER_PAGE || body.meta?.total !== MESSAGES) {
    throw new Error(
      `GET ${query || "page 1"}: ${body.data?.length} messages of ${body.meta?.total}`,
    );
  }
}
