import { Hono } from "hono";
import type { CatalogEntry } from "../domain/webhooks/catalog.ts";
import type { ApiEnv } from "./env.ts";

/**
 * GET /event-types: every type a subscription can be sent, with its JSON Schema and an example.
 * Any token may read it: it says what the service sends, nothing of a workspace. Its body is made
 * once, as it changes only with a release.
 */
export function eventTypeRoutes(catalog: CatalogEntry[]) {
  const body = JSON.stringify({ data: catalog });
  return new Hono<ApiEnv>().get(
    "/",
    (c) => c.body(body, 200, { "content-type": "application/json" }),
  );
}
