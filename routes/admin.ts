/**
 * `POST /admin/v1/<command>` (decisions.md, "Operating a deployed service from anywhere"): the
 * admin CLI with `ADMIN_URL` runs its commands here, on this service's store. A request is checked
 * from its signed headers before its body is read (domain/data/admin_requests.ts); a refused one
 * is 401 with no detail, logged and kept in the admin log with why, and counted against the address's guessing limit.
 * `ADMIN_REMOTE=false` takes the path away (404).
 */
import { type Context, Hono } from "hono";
import { createHash } from "node:crypto";
import type { Ctx } from "../domain/context.ts";
import {
  AdminRefused,
  type AdminRunner,
  recordRefusal,
  verifyAdminRequest,
} from "../domain/data/admin_requests.ts";
import type { GuessGuard } from "../domain/guards/guessing.ts";
import { ApiError } from "../core/errors.ts";
import { log } from "../core/log.ts";
import { table } from "../core/tables.ts";
import { clientAddress } from "./client_address.ts";
import { MAX_BODY_BYTES, readText } from "./body.ts";

/** An object of strings (flags, files' texts), read into a table without a prototype. */
function stringsOf(value: unknown, what: string): Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ApiError(400, `The ${what} are not a JSON object of strings.`);
  }
  const out = table<string>();
  for (const [name, given] of Object.entries(value)) {
    if (typeof given !== "string") throw new ApiError(400, `The ${what} are not all strings.`);
    out[name] = given;
  }
  return out;
}

/** JSON text's value, or the 400 naming what it should have been. */
function parsed(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, `The ${what} are not JSON.`);
  }
}

/** A request's flags and files: the body's (`{ flags, files }`), or the flags header's. */
function inputsOf(body: string, { header }: { header: string | null }) {
  if (header !== null) {
    return { flags: stringsOf(parsed(header, "flags"), "flags"), files: table<string>() };
  }
  const value = parsed(body, "flags") as { flags?: unknown; files?: unknown } | null;
  return {
    flags: stringsOf(value?.flags, "flags"),
    files: stringsOf(value?.files ?? {}, "files"),
  };
}

/** The request's body, which must be what it signed: JSON text, or a file spooled to disk. */
async function bodyOf(c: Context, { file, signed }: { file: boolean; signed: string }) {
  if (!file) {
    const text = await readText(c);
    if (text.length > MAX_BODY_BYTES) throw new ApiError(413, "The request is too large.");
    const hash = createHash("sha256").update(text).digest("hex");
    if (hash !== signed) throw new AdminRefused("bad signature");
    return { text, upload: undefined };
  }
  const dir = await Deno.makeTempDir({ prefix: "admin-upload-" });
  const upload = `${dir}/file`;
  const hash = createHash("sha256");
  const out = await Deno.open(upload, { write: true, createNew: true });
  const hashing = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, next) {
      hash.update(chunk);
      next.enqueue(chunk);
    },
  });
  await (c.req.raw.body ?? new Blob().stream()).pipeThrough(hashing).pipeTo(out.writable);
  if (hash.digest("hex") !== signed) {
    await Deno.remove(dir, { recursive: true });
    throw new AdminRefused("bad signature");
  }
  return { text: "", upload };
}

/**
 * A file the command made, sent down and then removed (sent whole, or cut short). Its summary and
 * the notes go in a header: JSON escapes every control character.
 */
async function sendFile(file: string, result: { value: unknown; notes: string[] }) {
  const opened = await Deno.open(file);
  const { size } = await opened.stat();
  const cleanup = () => void Deno.remove(file).catch(() => {});
  const body = opened.readable.pipeThrough(
    new TransformStream({ flush: cleanup, cancel: cleanup }),
  );
  return new Response(body, {
    headers: {
      "Content-Type": "application/octet-stream",
      "Content-Length": String(size),
      "X-Admin-Result": JSON.stringify(result),
    },
  });
}

export function adminRoutes(
  ctx: Ctx,
  { runner, guard }: { runner: AdminRunner; guard: GuessGuard },
) {
  const app = new Hono();
  app.use("*", async (c, next) => {
    if (!ctx.settings.adminRemote) return c.json({ message: "Not found." }, 404);
    await next();
  });
  app.post("/v1/:command", async (c) => {
    const name = c.req.param("command");
    const address = clientAddress(c, ctx.settings.trustProxy);
    const path = new URL(c.req.url).pathname;
    const file = runner.takesFile(name);
    let upload: string | undefined;
    try {
      const signed = await guard.lookup(
        address,
        "admin_signature",
        () =>
          verifyAdminRequest(ctx, {
            method: "POST",
            path,
            headers: c.req.raw.headers,
            from: { command: name, address },
          }),
      );
      const body = await guard.lookup(
        address,
        "admin_signature",
        () => bodyOf(c, { file, signed: signed.bodySha256 }),
      );
      upload = body.upload;
      const { flags, files } = inputsOf(body.text, { header: file ? signed.flags : null });
      const outcome = await runner.run(name, flags, { upload, files });
      log.info("admin: a command ran through the admin path", {
        command: name,
        address,
        ok: outcome.ok,
      });
      const notes = outcome.notes;
      if (!outcome.ok) {
        return c.json({ error: { message: outcome.message, exit: outcome.exit }, notes }, 422);
      }
      if ("file" in outcome) return await sendFile(outcome.file, { value: outcome.value, notes });
      return c.json(
        "text" in outcome ? { text: outcome.text, notes } : { value: outcome.value ?? null, notes },
      );
    } catch (e) {
      if (e instanceof AdminRefused) {
        log.warn("admin: a request was refused", { address, why: e.why, command: name });
        await recordRefusal(ctx, { command: name, address, why: e.why });
      }
      throw e;
    } finally {
      if (upload) await Deno.remove(upload.replace(/\/[^/]*$/, ""), { recursive: true });
    }
  });
  return app;
}
