/**
 * Checks a webhook delivery's body against its type's schema in the event catalog, with Ajv: the
 * shared test receiver (webhook_receivers.ts) runs it on every delivery it gets, so each one the
 * suite makes is checked.
 */
import { Ajv2020, type ValidateFunction } from "npm:ajv@8.20.0/dist/2020.js";
import formats from "npm:ajv-formats@3.0.1";
import { eventCatalog } from "../domain/webhooks/catalog.ts";

let checks: Map<string, ValidateFunction> | undefined;

/** One validator per type, compiled strictly from the catalog the API serves. */
export function catalogValidators(
  catalog: { type: string; schema: object }[] = eventCatalog(),
): Map<string, ValidateFunction> {
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  formats.default(ajv);
  return new Map(catalog.map((t) => [t.type, ajv.compile(t.schema)]));
}

/** What is wrong with a delivery body, or null when it matches its type's schema. */
export function deliveryFaults(body: string): string | null {
  checks ??= catalogValidators();
  let event: { type?: string } = {};
  try {
    event = JSON.parse(body);
  } catch {
    return "the body is not JSON";
  }
  const type = String(event.type);
  const check = checks.get(type);
  if (!check) return `no catalog type ${type}`;
  if (check(event)) return null;
  return `${type}: ${check.errors!.map((e) => `${e.instancePath} ${e.message}`).join("; ")} in ${
    body.slice(0, 300)
  }`;
}
