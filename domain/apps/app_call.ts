/**
 * A request the service makes to an app and waits for (a slash command, a button press, a view
 * submission, a `url_verification` challenge), over the app's transport: to its request URL,
 * signed as Slack signs, under the subscription URL rules (every address public unless
 * WEBHOOKS_ALLOW_PRIVATE_URLS); or, for a Socket Mode app, as an envelope on one of its
 * connections, whose ack is the answer. Either within a time limit. Events go through the delivery
 * engine or the Socket Mode queue instead: they are retried, these are answered.
 */
import type { Ctx } from "../context.ts";
import { Connector } from "../../core/outbound/connector.ts";
import { type AttemptOutcome, MAX_RESPONSE_BYTES, send } from "../../core/outbound/send.ts";
import { slackSignatureHeaders } from "../../core/slack_signature.ts";
import type { App } from "../../core/app_records.ts";
import { CacheKind } from "../../core/memory.ts";
import { errorFields, log } from "../../core/log.ts";
import type { SocketHub } from "./socket/hub.ts";

/** What a Socket Mode app with no connection anywhere comes to, in plain words. */
export const NOT_CONNECTED = "the app is not connected";

/**
 * A request to an app, as the domain builds it: its kind (Socket Mode's envelope type), the app,
 * what it carries (a command's form fields, an interaction's payload), and, for an app with
 * request URLs, where it goes and the secret it is signed with.
 */
export interface AppRequest {
  app: App;
  type: "slash_commands" | "interactive";
  payload: Record<string, unknown>;
  url: string | null;
  signingSecret: string | null;
}

/** A request's body over HTTP: form fields, or an interaction's `payload` field, as Slack posts. */
const formOf = (r: AppRequest) =>
  new URLSearchParams(
    r.type === "slash_commands"
      ? r.payload as Record<string, string>
      : { payload: JSON.stringify(r.payload) },
  ).toString();

/** Who the service calls itself when it calls an app. */
const USER_AGENT = "TeamChat-Apps/1 (+Slack-compatible)";

/** How long a person waits for an app's answer: Slack's 3 seconds. */
export const APP_ANSWER_MS = 3_000;

/**
 * How long an app that missed the 3 seconds may still answer: its answer then reaches the person
 * as a later reply would. Slack drops the connection at 3 s; keeping it open lets a framework that
 * acknowledges late (Bolt, after a slow listener) still write its answer.
 */
export const APP_LATE_MS = 30_000;

/**
 * The service's calls to apps, made where the process starts: the connections it keeps, and the
 * answers still awaited after the person was told `pending`, which closing ends.
 */
export class AppCalls {
  readonly connector = new Connector();

  /** `sockets`: this process's Socket Mode connections (none in the CLI). */
  constructor(readonly sockets: SocketHub | null = null) {}
  readonly #late = new Set<Promise<void>>();
  readonly #closing = new AbortController();

  get closing(): AbortSignal {
    return this.#closing.signal;
  }

  /** Keeps `work` (what a late answer does) until it settles or the process closes. */
  later(work: Promise<void>): void {
    this.#late.add(work);
    work.finally(() => this.#late.delete(work));
  }

  async close(): Promise<void> {
    this.#closing.abort();
    await Promise.allSettled([...this.#late]);
    this.connector.close();
  }
}

/**
 * Opened signing secrets, by their sealed value: a sealed value opens to one secret only, so a
 * rotation elsewhere (a new sealed value) can never be answered from here with the old secret.
 */
const OPENED = new CacheKind<string>("opened signing secrets", 1_000);

/** The app's signing secret, opened; null for an app registered before it had one. */
export async function signingSecretOf(ctx: Ctx, app: App): Promise<string | null> {
  const sealed = app.signing_secret;
  if (!sealed) return null;
  const opened = ctx.kv.cache(OPENED);
  let secret = opened.get(sealed);
  if (secret === undefined) {
    secret = await ctx.keyring.decrypt(sealed);
    opened.set(sealed, secret);
  }
  return secret;
}

/**
 * Sends a request to the app over its transport and takes its answer (an HTTP answer's body, or
 * an ack's payload as JSON). Never throws: an unreachable app, a timeout or a refusal is an outcome.
 */
export function callApp(
  ctx: Ctx,
  calls: AppCalls,
  request: AppRequest,
  timeoutMs = APP_ANSWER_MS,
): Promise<AttemptOutcome> {
  if (request.app.socket_mode_enabled) return callSocket(calls, request, timeoutMs);
  return postToApp(ctx, calls, {
    url: request.url ?? "",
    body: formOf(request),
    contentType: "application/x-www-form-urlencoded",
    signingSecret: request.signingSecret ?? "",
    timeoutMs,
  });
}

const outcome = (o: Partial<AttemptOutcome>): AttemptOutcome => ({
  succeeded: false,
  response_status: null,
  error: null,
  response_body: null,
  retryAfterMs: null,
  ...o,
});

/** A request as an envelope on one of the app's connections; its ack is the answer. */
async function callSocket(
  calls: AppCalls,
  { app, type, payload }: AppRequest,
  timeoutMs: number,
): Promise<AttemptOutcome> {
  if (!calls.sockets) return outcome({ error: NOT_CONNECTED });
  const answer = await calls.sockets.call(app.id, { type, payload, timeoutMs });
  if (answer === "not connected") return outcome({ error: NOT_CONNECTED });
  if (answer === "closed") {
    return outcome({ error: "the app's connection closed before it answered" });
  }
  if (answer === "timed out") return outcome({ error: `timed out after ${timeoutMs} ms` });
  const body = answer.payload && typeof answer.payload === "object" &&
      Object.keys(answer.payload).length > 0
    ? JSON.stringify(answer.payload)
    : "";
  return outcome({ succeeded: true, response_status: 200, response_body: body });
}

/**
 * POSTs `body` to the app's `url`, signed with its `signingSecret`, and reads its answer whole (up
 * to 64 KiB). Never throws: an unreachable app, a timeout or a refusal is an outcome.
 */
export function postToApp(
  ctx: Ctx,
  calls: AppCalls,
  { url, body, contentType, signingSecret, timeoutMs = APP_ANSWER_MS }: {
    url: string;
    body: string;
    contentType: "application/json" | "application/x-www-form-urlencoded";
    signingSecret: string;
    timeoutMs?: number;
  },
): Promise<AttemptOutcome> {
  const headers = {
    "Content-Type": contentType,
    "User-Agent": USER_AGENT,
    ...slackSignatureHeaders(signingSecret, body),
  };
  return send(url, headers, body, {
    connector: calls.connector,
    timeoutMs,
    signal: calls.closing,
    allowPrivate: ctx.settings.webhooks.allowPrivateUrls,
    keepBytes: MAX_RESPONSE_BYTES,
  });
}

/**
 * Calls an app a person waits for: its outcome within APP_ANSWER_MS, or null when it has not
 * answered yet; an answer that comes later, within APP_LATE_MS, is handed to `late`.
 */
export async function callAppWaiting(
  ctx: Ctx,
  calls: AppCalls,
  request: AppRequest,
  late: (outcome: AttemptOutcome) => Promise<void>,
): Promise<AttemptOutcome | null> {
  const call = callApp(ctx, calls, request, APP_LATE_MS);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<null>((done) => timer = setTimeout(() => done(null), APP_ANSWER_MS));
  const first = await Promise.race([call, waited]);
  clearTimeout(timer);
  if (first === null) {
    calls.later(
      call.then(late).catch((e) =>
        log.warn("apps: a late answer could not be delivered", errorFields(e))
      ),
    );
  }
  return first;
}
