/**
 * A request the service makes to an app and waits for (a slash command, a button press, a view
 * submission, a `url_verification` challenge), as the domain builds it: one value, whatever the
 * app's transport. delivery/apps/sender.ts carries it, to its request URL (signed as Slack signs)
 * or as an envelope on one of its Socket Mode connections, whose ack is the answer. Events go
 * through the delivery engine or the Socket Mode queue instead: they are retried, these answered.
 */
import type { Ctx } from "../context.ts";
import type { AttemptOutcome } from "../../core/outbound/send.ts";
import type { App } from "../../core/app_records.ts";
import type { Subject } from "../../core/types.ts";
import { getTeam } from "../../kv/workspace.ts";
import { slugify } from "../channels/slug.ts";
import { CacheKind } from "../../core/memory.ts";

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

/**
 * How long an app that missed the 3 seconds may still answer: its answer then reaches the person
 * as a later reply would. Slack drops the connection at 3 s; keeping it open lets a framework that
 * acknowledges late (Bolt, after a slow listener) still write its answer.
 */
export const APP_LATE_MS = 30_000;

/**
 * Who carries requests to apps (delivery/apps/sender.ts), made where the process starts: the
 * connections it keeps, and the answers still awaited after the person was told `pending`.
 * Never throws: an unreachable app, a timeout or a refusal is an outcome.
 */
export interface AppCalls {
  /** The request over the app's transport, and its answer (an HTTP body, or an ack's payload). */
  call(ctx: Ctx, request: AppRequest, timeoutMs?: number): Promise<AttemptOutcome>;
  /**
   * The request for a person who waits: its outcome within Slack's 3 seconds, or null when the
   * app has not answered yet; an answer that comes later, within APP_LATE_MS, goes to `late`.
   */
  callWaiting(
    ctx: Ctx,
    request: AppRequest,
    late: (outcome: AttemptOutcome) => Promise<void>,
  ): Promise<AttemptOutcome | null>;
  /** POSTs `body` to `url`, signed with `signingSecret`: the Events API's url_verification. */
  post(ctx: Ctx, opts: {
    url: string;
    body: string;
    contentType: "application/json" | "application/x-www-form-urlencoded";
    signingSecret: string;
    timeoutMs?: number;
  }): Promise<AttemptOutcome>;
  /** Keeps `work` (what a late answer does) until it settles or the process closes. */
  later(work: Promise<void>): void;
  close(): Promise<void>;
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
 * Where an app takes people's interactions: its interactivity URL (for an external menu's
 * options, its options URL first), null when Socket Mode carries them; undefined when the app
 * takes none (interactivity off, or no URL and no Socket Mode).
 */
export function interactionsUrl(
  app: App,
  { options = false }: { options?: boolean } = {},
): string | null | undefined {
  const i = app.interactivity;
  if (!i?.is_enabled) return undefined;
  const url = (options ? i.message_menu_options_url : null) ?? i.request_url;
  if (!url && !app.socket_mode_enabled) return undefined;
  return url ?? null;
}

/** Who acts, as Slack's interaction payloads name them: `team` and `user`. */
export async function payloadActor(ctx: Ctx, subject: Subject) {
  const team = await getTeam(ctx.kv, subject.team_id);
  return {
    team: { id: subject.team_id, domain: slugify(team?.name ?? "team") },
    user: {
      id: subject.user_id,
      username: subject.name,
      name: subject.name,
      team_id: subject.team_id,
    },
  };
}
