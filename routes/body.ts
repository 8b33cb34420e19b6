import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { z } from "zod";
import { ApiError, type FieldErrors } from "../domain/errors.ts";

/** Request bodies larger than this are refused with 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

const notAnObject = () =>
  new ApiError(422, "The request body must be a JSON object.", {
    request: ["The request body must be a JSON object."],
  });

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

/** JSON text that must hold an object; anything else throws `refused()` (a 422). */
export function parseJsonObject(
  text: string,
  refused: () => ApiError = notAnObject,
): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    if (e instanceof SyntaxError) throw refused();
    throw e;
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
  const out: FieldErrors = {};
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

/** Reads and validates the JSON body. Call it after the resource and permission checks. */
export async function readBody<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  return validate(schema, await readJsonObject(c));
}
