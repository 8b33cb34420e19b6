/**
 * The admin CLI on a running service (decisions.md, "Operating a deployed service from
 * anywhere"): with `ADMIN_URL` (or `--url`), a command runs through `POST /admin/v1/<command>` on
 * that service, signed with APP_KEY (domain/data/admin_requests.ts), with the same flags, output,
 * errors and exit codes as on the store itself. Files travel in the request: `export` and `backup`
 * come down to `--to`, `import --from` goes up.
 */
import { createHash } from "node:crypto";
import { createKeyring, type Keyring } from "../core/keyring.ts";
import { loadSettings, SettingsError } from "../core/settings.ts";
import { sha256Hex, signAdminRequest } from "../domain/data/admin_requests.ts";
import { requireNewFile, requireReadable } from "../domain/data/backups.ts";
import { fileFlags, type Flags, PlainText, RemoteFailure, type RemoteFile } from "./command.ts";
import type { AnyCommand } from "./registry.ts";

const URL_FLAG = /^--url(?:=(.*))?$/;

/**
 * The service `line` (or ADMIN_URL) names, and the line without `--url`; null: local mode. Throws
 * on a URL that is none.
 */
export function remoteUrlOf(
  line: string[],
  fromEnv: string | undefined,
): { url: string | null; rest: string[] } {
  const rest = [...line];
  let url = fromEnv || null;
  const at = rest.findIndex((a) => URL_FLAG.test(a));
  if (at >= 0) {
    const inline = URL_FLAG.exec(rest[at])![1];
    url = inline ?? rest[at + 1] ?? "";
    rest.splice(at, inline === undefined ? 2 : 1);
  }
  if (url === null) return { url, rest };
  if (!/^https?:\/\/[^\s/]+/.test(url)) {
    throw new SettingsError(
      `${at >= 0 ? "--url" : "ADMIN_URL"}: must be the service's http:// or https:// address.`,
    );
  }
  return { url: url.replace(/\/+$/, ""), rest };
}

/** The operator's key: the service's APP_KEY, which signs every request. */
async function keyringOf(): Promise<Keyring> {
  const appKey = loadSettings(Deno.env.toObject()).appKey;
  if (!appKey) {
    throw new SettingsError(
      "APP_KEY: required with ADMIN_URL: set it (or APP_KEY_FILE) to the service's own key, which signs every request.",
    );
  }
  return await createKeyring(appKey);
}

/** Runs `name` on the service at `url`: what it printed there, as the local run would give it. */
export async function runRemote(
  url: string,
  { name, command, flags }: { name: string; command: AnyCommand; flags: Flags },
): Promise<unknown> {
  const keyring = await keyringOf();
  const role: RemoteFile | null = "onFile" in command ? command.remote : null;
  if (role && "localOnly" in role) throw new SettingsError(`${name}: ${role.localOnly}.`);
  if (role && "up" in role) return await upload(url, { keyring, name, flags, flag: role.up });
  if (role && "down" in role) {
    const to = flags[role.down];
    await requireNewFile(role.down, to, `${name}`);
    const { [role.down]: _, ...sent } = flags;
    const res = await send(url, { keyring, name, body: JSON.stringify({ flags: sent }) });
    return { ...await download(res, to), file: to };
  }
  const files = await filesOf(command, flags);
  const res = await send(url, { keyring, name, body: JSON.stringify({ flags, files }) });
  const answer = await res.json();
  tell(answer.notes);
  return typeof answer.text === "string" ? new PlainText(answer.text) : answer.value;
}

/** The notes a command made on the service, on stderr as if it ran here. */
const tell = (notes: unknown) => {
  if (Array.isArray(notes)) { for (const note of notes) console.error(String(note)); }
};

/** The text of each file the command's flags name (`--manifest <file>`), read here to send. */
async function filesOf(command: AnyCommand, flags: Flags): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const flag of fileFlags(command.usage)) {
    if (flags[flag] === undefined) continue;
    await requireReadable(flag, flags[flag]);
    files[flag] = await Deno.readTextFile(flags[flag]);
  }
  return files;
}

/** `import --from`: the file goes up as the body, its flags in a signed header. */
async function upload(
  url: string,
  { keyring, name, flags, flag }: { keyring: Keyring; name: string; flags: Flags; flag: string },
) {
  const from = flags[flag];
  const info = await requireReadable(flag, from);
  const hash = createHash("sha256");
  for await (const chunk of (await Deno.open(from)).readable) hash.update(chunk);
  const { [flag]: _, ...sent } = flags;
  const res = await send(url, {
    keyring,
    name,
    body: (await Deno.open(from)).readable.pipeThrough(progress(`${name}: sent`, info.size)),
    bodySha256: hash.digest("hex"),
    flags: JSON.stringify(sent),
    length: info.size,
  });
  const answer = await res.json();
  tell(answer.notes);
  return answer.value;
}

/** Files this large say how far they have come, on stderr, at each tenth. */
const PROGRESS_FROM_BYTES = 16 * 1024 * 1024;

/** Passes a file's bytes through, telling stderr of each tenth of `total` when it is large. */
function progress(label: string, total: number): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  let told = 0;
  const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
  return new TransformStream({
    transform(chunk, next) {
      seen += chunk.length;
      const tenth = Math.floor((seen / total) * 10);
      if (total >= PROGRESS_FROM_BYTES && tenth > told) {
        told = tenth;
        console.error(`${label} ${mib(seen)} of ${mib(total)} MiB`);
      }
      next.enqueue(chunk);
    },
  });
}

/** The file a command made on the service, written to `to` (whole, or not at all). */
async function download(res: Response, to: string): Promise<Record<string, unknown>> {
  const { value: summary, notes } = JSON.parse(res.headers.get("X-Admin-Result") ?? "{}");
  tell(notes);
  const partial = `${to}.partial-${crypto.randomUUID().slice(0, 8)}`;
  try {
    // As the service writes its own: an export holds every message, a backup the whole store.
    const out = await Deno.open(partial, { write: true, createNew: true, mode: 0o600 });
    const size = Number(res.headers.get("Content-Length") ?? NaN);
    await res.body!.pipeThrough(progress(`${to}: received`, size)).pipeTo(out.writable);
    await Deno.rename(partial, to);
  } catch (e) {
    await Deno.remove(partial).catch(() => {});
    throw e;
  }
  return summary;
}

/** Sends a signed request; its answer when 2xx, else the refusal in the CLI's words. */
async function send(
  url: string,
  { keyring, name, body, bodySha256, flags = "", length }: {
    keyring: Keyring;
    name: string;
    body: string | ReadableStream<Uint8Array>;
    bodySha256?: string;
    flags?: string;
    length?: number;
  },
): Promise<Response> {
  const path = `/admin/v1/${encodeURIComponent(name)}`;
  const hashed = bodySha256 ?? await sha256Hex(new TextEncoder().encode(body as string));
  const headers = {
    ...signAdminRequest(keyring, { method: "POST", path, bodySha256: hashed, flags }),
    "Content-Type": typeof body === "string" ? "application/json" : "application/octet-stream",
    ...(length !== undefined ? { "Content-Length": String(length) } : {}),
  };
  let res: Response;
  try {
    res = await fetch(`${url}${path}`, { method: "POST", headers, body });
  } catch (e) {
    throw new SettingsError(
      `ADMIN_URL: can't reach ${url}: ${(e as Error).message.split("\n")[0]}`,
    );
  }
  if (res.ok) return res;
  throw await refusalOf(url, res);
}

/** A service's refusal as the CLI says it: the command's own words, or what the HTTP status means. */
async function refusalOf(url: string, res: Response): Promise<Error> {
  const body = await res.json().catch(() => null);
  const error = body?.error;
  if (typeof error?.message === "string" && typeof error.exit === "number") {
    tell(body.notes);
    return new RemoteFailure(error.message, error.exit);
  }
  if (res.status === 401) {
    return new SettingsError(
      `ADMIN_URL: ${url} refused the request (401): APP_KEY must be that service's own, and this machine's clock within 5 minutes of its.`,
    );
  }
  if (res.status === 404) {
    return new SettingsError(
      `ADMIN_URL: ${url} has no admin path (404): is it this service, with ADMIN_REMOTE on?`,
    );
  }
  if (res.status === 429) {
    return new SettingsError(
      `ADMIN_URL: ${url} refuses this address for a minute (429): too many refused requests.`,
    );
  }
  return new SettingsError(`ADMIN_URL: ${url} answered HTTP ${res.status}.`);
}
