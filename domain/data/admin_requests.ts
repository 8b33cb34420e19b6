/**
 * The operator's requests to a running service (decisions.md, "Operating a deployed service from
 * anywhere"): the admin CLI with `ADMIN_URL` runs each command through `POST /admin/v1/<command>`,
 * signed with a key derived from APP_KEY, which the operator already keeps. The MAC covers the
 * method, the path, a timestamp, a nonce, the body's SHA-256 and the flags when they travel in a
 * header; a request more than 5 minutes off, a nonce seen before or a wrong MAC is refused alike,
 * with no detail. Each request, taken or refused, is kept in the admin log (kv/service/admin_audit.ts).
 */
import type { Ctx } from "../context.ts";
import type { Keyring } from "../../core/keyring.ts";
import { ApiError } from "../../core/errors.ts";
import { sameText } from "../../core/same_text.ts";
import { takeNonce } from "../../kv/service/admin_nonces.ts";
import {
  addAdminAudit,
  type AdminAuditEntry,
  listAdminAudit,
} from "../../kv/service/admin_audit.ts";

/** The headers a signed request carries. */
export const ADMIN_HEADERS = {
  timestamp: "X-Admin-Timestamp",
  nonce: "X-Admin-Nonce",
  signature: "X-Admin-Signature",
  /** The body's SHA-256 (hex): signed, so a request is checked before its body is read. */
  bodySha256: "X-Admin-Body-Sha256",
  /** A command's flags (JSON) when its body is a file (`import`). */
  flags: "X-Admin-Flags",
} as const;

/** How far a request's time may be from the service's. */
export const ADMIN_WINDOW_MS = 5 * 60_000;

const NONCE = /^[A-Za-z0-9_-]{16,64}$/;

/** What a request's MAC covers. */
export interface AdminRequestParts {
  method: string;
  /** The path, `/admin/v1/<command>`. */
  path: string;
  /** The body's SHA-256, in hex. */
  bodySha256: string;
  /** The flags header's text, when the flags travel there; "" otherwise. */
  flags: string;
}

const macInput = (p: AdminRequestParts & { timestamp: string; nonce: string }) =>
  [p.method.toUpperCase(), p.path, p.timestamp, p.nonce, p.bodySha256, p.flags].join("\n");

/** The SHA-256 of `bytes`, in hex. */
export async function sha256Hex(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)).toHex();
}

/** The headers that sign a request, made now with a fresh nonce (the CLI's side). */
export function signAdminRequest(keyring: Keyring, parts: AdminRequestParts) {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const nonce = crypto.getRandomValues(new Uint8Array(18)).toBase64({ alphabet: "base64url" });
  return {
    [ADMIN_HEADERS.timestamp]: timestamp,
    [ADMIN_HEADERS.nonce]: nonce,
    [ADMIN_HEADERS.signature]: keyring.adminMac(macInput({ ...parts, timestamp, nonce })),
    [ADMIN_HEADERS.bodySha256]: parts.bodySha256,
    ...(parts.flags ? { [ADMIN_HEADERS.flags]: parts.flags } : {}),
  };
}

/** Why a request was refused: for the service's log, never for the answer. */
export type AdminRefusal = "unsigned" | "stale" | "bad signature" | "replayed";

/** A refused request: 401, saying nothing of why. */
export class AdminRefused extends ApiError {
  constructor(readonly why: AdminRefusal) {
    super(401, "Unauthorized.");
  }
}

/**
 * Checks a request's signature from its headers alone (the service's side), before its body is
 * read, then takes its nonce: a request seen before is refused however well signed. Throws
 * AdminRefused; gives what the request signed that its body must then match.
 */
export async function verifyAdminRequest(
  ctx: Ctx,
  { method, path, headers, from }: {
    method: string;
    path: string;
    headers: Headers;
    /** Who sent it: the command it names and the client's address, for the admin log. */
    from: { command: string; address: string };
  },
): Promise<{ bodySha256: string; flags: string }> {
  const timestamp = headers.get(ADMIN_HEADERS.timestamp) ?? "";
  const nonce = headers.get(ADMIN_HEADERS.nonce) ?? "";
  const signature = headers.get(ADMIN_HEADERS.signature) ?? "";
  const bodySha256 = headers.get(ADMIN_HEADERS.bodySha256) ?? "";
  const flags = headers.get(ADMIN_HEADERS.flags) ?? "";
  const hex64 = /^[0-9a-f]{64}$/;
  if (
    !/^[0-9]{1,12}$/.test(timestamp) || !NONCE.test(nonce) || !hex64.test(signature) ||
    !hex64.test(bodySha256)
  ) {
    throw new AdminRefused("unsigned");
  }
  const parts = { method, path, bodySha256, flags };
  if (Math.abs(Date.now() - Number(timestamp) * 1000) > ADMIN_WINDOW_MS) {
    throw new AdminRefused("stale");
  }
  const expected = ctx.keyring.adminMac(macInput({ ...parts, timestamp, nonce }));
  if (!sameText(signature, expected)) throw new AdminRefused("bad signature");
  const entry = { ...from, outcome: "accepted" as const };
  if (!await takeNonce(ctx.kv, { nonce, keepMs: 2 * ADMIN_WINDOW_MS, entry })) {
    throw new AdminRefused("replayed");
  }
  return { bodySha256, flags };
}

/**
 * What running a command gave, as the service answers it and the CLI prints it, with the notes it
 * made for the operator on the way (stderr's lines).
 */
export type AdminOutcome = AdminResult & { notes: string[] };

/** What running a command gave, without the notes. */
export type AdminResult =
  | { ok: true; value: unknown }
  | { ok: true; text: string }
  /** A file the service made for the CLI to download (`export`, `backup`), and its summary. */
  | { ok: true; file: string; value: unknown }
  /** A refusal: its one line, and the exit code the CLI ends with (2: the command line). */
  | { ok: false; message: string; exit: number };

/** What a request brings besides its flags: files the command reads, as the CLI read them. */
export interface AdminInputs {
  /** Where the file the CLI sent as the body was put (`import --from`). */
  upload?: string;
  /** The text of each file a flag names (`--manifest <file>`), by flag. */
  files: Record<string, string>;
}

/** The service's runner of admin commands: the CLI's own table (cli/service_runner.ts). */
export interface AdminRunner {
  /** Whether `name` is a command that takes a file from the CLI (`import --from`). */
  takesFile(name: string): boolean;
  /** Runs `name` with `flags` and what else the request brought. */
  run(name: string, flags: Record<string, string>, inputs: AdminInputs): Promise<AdminOutcome>;
}

/** Keeps a refused request in the service's admin log (`audit:admin`), with why. */
export async function recordRefusal(
  ctx: Ctx,
  { command, address, why }: { command: string; address: string; why: AdminRefusal },
): Promise<void> {
  await addAdminAudit(ctx.kv.atomic(), { command, address, why, outcome: "refused" }).commit();
}

/** The admin log, newest first: what ran through the admin path and what was refused. */
export function readAdminAudit(ctx: Ctx, limit: number): Promise<AdminAuditEntry[]> {
  return listAdminAudit(ctx.kv, limit);
}
