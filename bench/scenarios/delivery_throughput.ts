/**
 * Issues 4 and 20, throughput: a backlog of events × subscriptions drained by the service's
 * delivery engine into a fast local receiver, against a bare loop making one signed POST and one
 * KV commit per delivery at the engine's concurrency; with several subscriptions, and with one
 * busy one. Issue 20 asks for CPU per delivery at or below the bare loop's; issue 56, that signing
 * both ways (ours and Standard Webhooks') cost at most 5% of the deliveries a second.
 */
import { freePort, runBaseline, startService } from "../procs.ts";
import type { Receiver } from "../receiver.ts";
import { cpuRow, limitRow, type Measured, ratioRow, type Row } from "../report.ts";
import { openCtx, seedPosts, seedSubscriptions, seedWorkspace, serviceEnv } from "../seed.ts";
import { type Bench, bestOf, scenarioDir, using } from "./context.ts";
import type { SignatureScheme } from "../../core/webhook_records.ts";
import { Signer } from "../../core/signer.ts";
import { deliveryHeaders } from "../../delivery/sign.ts";
import { mintSigningSecret } from "../../domain/webhooks/webhooks.ts";
import { eventCatalog } from "../../domain/webhooks/catalog.ts";

/** Subscriptions and events per subscription of each case. */
const CASES = [{ subscriptions: 4, events: 2000 }, { subscriptions: 1, events: 4000 }];
/** The engine's defaults (delivery/engine.ts): 4 attempts per subscription, 64 in all. */
const concurrencyOf = (subscriptions: number) => Math.min(64, 4 * subscriptions);
const DRAIN_TIMEOUT_MS = 60_000;

interface Case {
  subscriptions: number;
  events: number;
  scheme?: SignatureScheme;
}

/** Deliveries per second between the first and the last arrival. */
const arrivalRate = (r: Receiver) => (r.count - 1) / ((r.lastAt - r.firstAt) / 1000);

async function serviceDrain(root: string, receiver: Receiver, c: Case): Promise<Measured> {
  const deliveries = c.subscriptions * c.events;
  const dir = await scenarioDir(root, "delivery");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  await seedSubscriptions(ctx, seeded, receiver.url, c.subscriptions, undefined, c.scheme);
  // Committed here, where no engine runs: the jobs are left free, and the server's engine pulls
  // the backlog from KV as its window has room, from its start-up pull on.
  await seedPosts(ctx, seeded, c.events);
  ctx.kv.close();
  receiver.reset();
  return await using(startService(serviceEnv(kvPath, freePort())), async (p) => {
    // The engine may start before the server answers: count CPU only from here on.
    const [cpuBefore, countBefore] = [p.cpuMs(), receiver.count];
    if (!await receiver.waitFor(deliveries, DRAIN_TIMEOUT_MS)) {
      throw new Error(`only ${receiver.count} of ${deliveries} deliveries arrived`);
    }
    const cpuUs = (p.cpuMs() - cpuBefore) * 1000 / (receiver.count - countBefore);
    return { rate: arrivalRate(receiver), cpuUs };
  });
}

async function bareLoop(root: string, receiver: Receiver, c: Case): Promise<Measured> {
  const deliveries = c.subscriptions * c.events;
  const dir = await scenarioDir(root, "delivery-bare");
  receiver.reset();
  const { cpuUs } = await runBaseline<{ cpuUs: number }>("delivery_loop", [
    receiver.url,
    `${dir}/baseline.sqlite3`,
    String(deliveries),
    String(concurrencyOf(c.subscriptions)),
  ]);
  if (receiver.count !== deliveries) {
    throw new Error(`the bare loop delivered ${receiver.count} of ${deliveries}`);
  }
  return { rate: arrivalRate(receiver), cpuUs: cpuUs / deliveries };
}

/**
 * CPU of one delivery's headers, signatures included, in µs, measured alone: the drains' rates
 * move by 10% or more from run to run on this machine, more than a second HMAC costs.
 */
function headerCostUs(scheme: SignatureScheme): number {
  const signers = [new Signer(mintSigningSecret())];
  const example = eventCatalog()[0].example;
  const event = { id: example.id, type: "message.created" as const };
  const body = JSON.stringify(example);
  const runs = 20_000;
  for (let i = 0; i < 1000; i++) deliveryHeaders({ event, signers, body, scheme });
  const start = performance.now();
  for (let i = 0; i < runs; i++) deliveryHeaders({ event, signers, body, scheme });
  return (performance.now() - start) * 1000 / runs;
}

export async function deliveryThroughput({ root, receiver }: Bench): Promise<Row[]> {
  const rows: Row[] = [];
  for (const c of CASES) {
    const both = { ...c, scheme: "both" as const };
    const { bare, service, signedTwice } = await bestOf({
      bare: () => bareLoop(root, receiver, c),
      service: () => serviceDrain(root, receiver, c),
      signedTwice: () => serviceDrain(root, receiver, both),
    });
    const what = `${c.events} ev x ${c.subscriptions} sub${c.subscriptions > 1 ? "s" : ""}`;
    rows.push(
      ratioRow(
        `webhook deliveries/s (${what}, c=${concurrencyOf(c.subscriptions)})`,
        service,
        bare,
        0.9,
      ),
      cpuRow(`  CPU per delivery vs the bare loop (${what})`, service, bare, 1.0),
    );
    rows.push(ratioRow(`  signed both ways vs ours alone (${what})`, signedTwice, service, 0.95));
    const added = headerCostUs("both") - headerCostUs("service");
    rows.push(
      limitRow(
        `  signing both ways adds, of a delivery's CPU (${what})`,
        added / service.cpuUs * 100,
        5,
        "%",
      ),
    );
  }
  return rows;
}
