import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { z } from "zod";
import { ApiError, type FieldErrors, invalid } from "../core/errors.ts";
import { isUuid, storedId } from "../core/ids.ts";
import { headerText } from "../core/header_text.ts";
import { table } from "../core/tables.ts";

/** Request bodies larger than this are refused with 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Why a body isn't JSON, where the parser says, and what to send instead. */
export const notJson = (text: string, e: SyntaxError) =>
  `${text.trim() === "" ? "The body is empty" : `The body is not valid JSON (${e.message})`}; ` +
  "send a JSON object, with Content-Type: application/json.";

const notAnObject = (why = "The request body must be a JSON object.") =>
  new ApiError(422, why, { request: [why] });

/**
 * The body as text. A body that ends before its declared length, or whose connection drops
 * while it is read, is the client's fault and nothing was stored: 400, not 500. Over 1 MiB the
 * body limit's 413 stands.
 */
export async function readText(c: Context): Promise<string> {
  try {
    return await c.req.text();
  } catch (e) {
    if (e instanceof HTTPException) throw e;
    throw new ApiError(400, "The request body ended before its declared length.");
  }
}

/**
 * How much structure a JSON body may hold: far beyond any request of ours (a subscription's
 * channel ids, a Slack payload's thousand blocks), and little enough that parsing the largest
 * body allowed costs a few milliseconds. Many keys are what makes JSON.parse slow (60,000 in one
 * object take 20-30 ms); long strings and deep nesting are refused before they are parsed.
 */
const JSON_BUDGET = { depth: 64, keys: 10_000, items: 60_000 };

/**
 * What of JSON_BUDGET `text` exceeds, found by a scan that stops at the first excess and jumps
 * over strings, or null. Not a validator: text that is not JSON passes, for JSON.parse to refuse.
 */
export function jsonExcess(text: string): "depth" | "keys" | "items" | null {
  let depth = 0;
  let keys = 0;
  let items = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
      if (i < 0) return null;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > JSON_BUDGET.depth) return "depth";
    } else if (c === 0x5d || c === 0x7d) depth--;
    else if (c === 0x3a) {
      if (++keys > JSON_BUDGET.keys) return "keys";
    } else if (c === 0x2c && ++items > JSON_BUDGET.items) return "items";
  }
  return null;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The index of the quote that closes the string opened at `open`: one not escaped; -1 if none. */
function closingQuote(text: string, open: number): number {
  let end = open;
  for (;;) {
    end = text.indexOf('"', end + 1);
    if (end < 0) return -1;
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return end;
  }
}

const EXCESS = {
  depth: `nested deeper than ${JSON_BUDGET.depth} levels`,
  keys: `holding more than ${JSON_BUDGET.keys} keys`,
  items: `holding more than ${JSON_BUDGET.items} items`,
};

/**
 * JSON text that must hold an object; anything else throws `refused()` (a 422). Text beyond
 * JSON_BUDGET is refused unparsed, with the 422 on `field`.
 */
export function parseJsonObject(
  text: string,
  refused: (why?: string) => ApiError = notAnObject,
  field = "request",
): Record<string, unknown> {
  const excess = jsonExcess(text);
  if (excess) throw invalid(field, `The request body is too complex: ${EXCESS[excess]}.`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    // Where it broke, as the parser says it: a stray quote in a shell command shows at once.
    throw refused(notJson(text, e));
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw refused();
  return parsed as Record<string, unknown>;
}

/** Reads the body as a JSON object, or throws the 422 with `errors.request`. */
export async function readJsonObject(c: Context): Promise<Record<string, unknown>> {
  return parseJsonObject(await readText(c));
}

/** Turns zod's issues into the `errors` map: field name to its messages. */
export function fieldErrors(error: z.ZodError): FieldErrors {
  // Named by the request's own keys (a record's), so no name may reach a prototype.
  const out: FieldErrors = table();
  for (const issue of error.issues) {
    const field = issue.path.length ? issue.path.join(".") : "request";
    (out[field] ??= []).push(issue.message);
  }
  return out;
}

/** Validates a value against a schema, or throws a 422 naming every failing field. */
export function validate<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = fieldErrors(result.error);
  throw new ApiError(422, Object.values(errors)[0][0], errors);
}

/**
 * Reads and validates the JSON body. Call it after the resource and permission checks. Fields
 * the operation doesn't take are ignored, and named in `X-Ignored-Fields`: a typo (`thread_ts`
 * for `thread_root_id`) that would quietly post at the top level shows in the answer.
 */
export async function readBody<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  const body = await readJsonObject(c);
  nameIgnored(c, schema, Object.keys(body));
  return validate(schema, body);
}

/**
 * Reads and validates the query. Parameters the operation doesn't take are ignored and named in
 * `X-Ignored-Fields`, as a body's fields are: `?per_page=3` or `?limt=3` answer with the page
 * they always get, but say so.
 */
export function readQuery<T extends z.ZodType>(c: Context, schema: T): z.infer<T> {
  const query = c.req.query();
  nameIgnored(c, schema, Object.keys(query));
  return validate(schema, query);
}

/**
 * `X-Ignored-Fields`: the names given that `schema`, an object, doesn't take, each
 * percent-encoded where it holds what a header can't (a control character, a comma, `%`).
 */
function nameIgnored(c: Context, schema: z.ZodType, names: string[]) {
  const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape;
  const ignored = shape ? names.filter((k) => !Object.hasOwn(shape, k)) : [];
  if (ignored.length > 0) {
    c.header("X-Ignored-Fields", ignored.map((name) => headerText(name, ",")).join(", "));
  }
}

/** A field holding an id: a UUID in any case, read as ids are stored; anything else is `error`. */
export const uuidText = (error: string) =>
  z.string({ error }).refine(isUuid, { error }).transform((id) => storedId(id)!);
