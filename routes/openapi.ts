import type { Context } from "hono";

const document = await Deno.readTextFile(new URL("../openapi.yaml", import.meta.url));

/** GET /api/v1/openapi.yaml: the interface document this build answers to. */
export const openapiHandler = (c: Context) =>
  c.body(document, 200, { "Content-Type": "application/yaml; charset=utf-8" });
