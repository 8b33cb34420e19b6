import type { Context } from "hono";
import { timingSafeEqual } from "node:crypto";
import type { Ctx } from "../domain/context.ts";
import { notFound, unauthenticated } from "../core/errors.ts";
import { registry } from "../core/metrics.ts";
import { sha256Hex } from "../core/random.ts";
import { measureDelivery } from "../domain/data/operations.ts";
import { measureSockets } from "../domain/apps/socket/status.ts";

const enc = new TextEncoder();

/** Compared as hashes, so the comparison takes as long whatever the guess. */
const sameSecret = (a: string, b: string) =>
  timingSafeEqual(enc.encode(sha256Hex(a)), enc.encode(sha256Hex(b)));

/**
 * GET /metrics: Prometheus text. It exists only when METRICS_TOKEN is set (404 otherwise) and
 * wants it as the bearer (401 otherwise). The store-wide figures (backlog, subscriptions) are
 * read now: a few reads per subscription.
 */
export const metricsHandler = (ctx: Ctx) => async (c: Context) => {
  const expected = ctx.settings.metricsToken;
  if (!expected) throw notFound();
  const given = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("Authorization") ?? "")?.[1] ?? "";
  if (!sameSecret(given, expected)) throw unauthenticated("The metrics token is missing or wrong.");
  await measureDelivery(ctx);
  await measureSockets(ctx);
  return c.body(await registry.metrics(), 200, { "Content-Type": registry.contentType });
};
