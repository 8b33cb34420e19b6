/**
 * The carrier (issue 68): carries what the domain asks of an app (domain/apps/app_call.ts's AppRequest) over the app's
 * transport: to its request URL, signed as Slack signs (core/slack_wire.ts), under the
 * subscription URL rules (every address public unless WEBHOOKS_ALLOW_PRIVATE_URLS); or, for a
 * Socket Mode app, as an envelope on one of its connections, here or on another instance.
 */
import type { Ctx } from "../../domain/context.ts";
import { Connector } from "../../core/outbound/connector.ts";
import { type AttemptOutcome, MAX_RESPONSE_BYTES, send } from "../../core/outbound/send.ts";
import { SLACK_ANSWER_MS, SLACK_USER_AGENT, slackSignatureHeaders } from "../../core/slack_wire.ts";
import { APP_LATE_MS, type AppRequest, NOT_CONNECTED } from "../../domain/apps/app_call.ts";
import type { AppCarrier, SocketGrant } from "../../domain/app_carrier.ts";
import { errorFields, log } from "../../core/log.ts";
import type { SocketHub } from "./socket/hub.ts";

/** A request's body over HTTP: form fields, or an interaction's `payload` field, as Slack posts. */
const formOf = (r: AppRequest) =>
  new URLSearchParams(
    r.type === "slash_commands"
      ? r.payload as Record<string, string>
      : { payload: JSON.stringify(r.payload) },
  ).toString();

/**
 * The service's calls to apps, made where the process starts: the connections it keeps, and the
 * answers still awaited after the person was told `pending`, which closing ends.
 */
export class AppSender implements AppCarrier {
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

  call(ctx: Ctx, request: AppRequest, timeoutMs = SLACK_ANSWER_MS): Promise<AttemptOutcome> {
    return callApp(ctx, this, request, timeoutMs);
  }

  async callWaiting(
    ctx: Ctx,
    request: AppRequest,
    late: (outcome: AttemptOutcome) => Promise<void>,
  ): Promise<AttemptOutcome | null> {
    const call = this.call(ctx, request, APP_LATE_MS);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise<null>((done) =>
      timer = setTimeout(() => done(null), SLACK_ANSWER_MS)
    );
    const first = await Promise.race([call, waited]);
    clearTimeout(timer);
    if (first === null) {
      this.later(
        call.then(late).catch((e) =>
          log.warn("apps: a late answer could not be delivered", errorFields(e))
        ),
      );
    }
    return first;
  }

  accept(socket: WebSocket, grant: SocketGrant): void {
    if (this.sockets) return this.sockets.accept(socket, grant);
    socket.onopen = () => socket.close(1011, "no Socket Mode here");
  }

  waitOf(tokenId: string): number {
    return this.sockets?.waitOf(tokenId) ?? 0;
  }

  post(ctx: Ctx, opts: Parameters<AppCarrier["post"]>[1]): Promise<AttemptOutcome> {
    return postToApp(ctx, this, opts);
  }

  async close(): Promise<void> {
    await this.sockets?.close();
    this.#closing.abort();
    await Promise.allSettled([...this.#late]);
    this.connector.close();
  }
}

/**
 * Sends a request to the app over its transport and takes its answer (an HTTP answer's body, or
 * an ack's payload as JSON). Never throws: an unreachable app, a timeout or a refusal is an outcome.
 */
function callApp(
  ctx: Ctx,
  calls: AppSender,
  request: AppRequest,
  timeoutMs = SLACK_ANSWER_MS,
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
  calls: AppSender,
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
function postToApp(
  ctx: Ctx,
  calls: AppSender,
  { url, body, contentType, signingSecret, timeoutMs = SLACK_ANSWER_MS }: {
    url: string;
    body: string;
    contentType: "application/json" | "application/x-www-form-urlencoded";
    signingSecret: string;
    timeoutMs?: number;
  },
): Promise<AttemptOutcome> {
  const headers = {
    "Content-Type": contentType,
    "User-Agent": SLACK_USER_AGENT,
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
