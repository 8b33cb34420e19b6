import type { Context } from "hono";
import { html } from "hono/html";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError } from "../../core/errors.ts";
import type { FormState } from "../../web/forms.tsx";
import type { FormFields } from "./env.ts";

/** Sends a page of the screen. */
export const page = (c: Context, node: unknown, status: ContentfulStatusCode = 200) =>
  c.html(html`<!doctype html>${node}`, status);

/** Errors a form answers by showing itself again, with the message next to the field. */
const FORM_STATUSES = new Set([403, 404, 422]);

/** Fields never shown again, whatever went wrong. */
const SECRET_FIELDS = new Set(["_csrf"]);

/**
 * The form as it comes back after a domain error: what was typed, and the messages by field.
 * Any other error is rethrown, to the screen's error page.
 */
export function formStateOf(
  e: unknown,
  fields: FormFields,
): FormState & { status: 403 | 404 | 422 } {
  if (!(e instanceof ApiError) || !FORM_STATUSES.has(e.status)) throw e;
  const values = Object.fromEntries(
    Object.entries(fields).filter(([name]) => !SECRET_FIELDS.has(name)),
  );
  return {
    values,
    errors: e.errors ?? {},
    message: e.errors ? undefined : e.message,
    status: e.status as 403 | 404 | 422,
  };
}

/** Reads a urlencoded or multipart form; files are ignored. */
export async function readForm(c: Context): Promise<FormFields> {
  const body = await c.req.parseBody({ all: true });
  // Defined, not assigned: a field named `__proto__` is a field like any other.
  return Object.fromEntries(
    Object.entries(body).flatMap(([name, value]) => {
      const texts = [value].flat().filter((v): v is string => typeof v === "string");
      return texts.length ? [[name, Array.isArray(value) ? texts : texts[0]]] : [];
    }),
  );
}

/** A confirmation named in a redirect's `done` parameter; only known ones are shown. */
export function noticeOf(c: Context, notices: Record<string, string>): string | undefined {
  const done = c.req.query("done");
  return done && Object.hasOwn(notices, done) ? notices[done] : undefined;
}
