/**
 * Apps as their manifests declare them (decisions.md, "Apps that listen"): registered from a
 * manifest (`app:create --manifest`), changed in place (`app:update`: installs keep working, and
 * a new event request URL must answer Slack's `url_verification` challenge first), exported back
 * (export → create → export is identical), and their signing secret rotated. The operator's alone.
 */
import type { Ctx } from "../context.ts";
import type { App } from "../../core/app_records.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { newId, nowIso } from "../../core/ids.ts";
import { randomBase62, sha256Hex } from "../../core/random.ts";
import { retrying } from "../../core/retry.ts";
import { resolveTarget, UnsafeUrlError } from "../../core/url_safety.ts";
import { getApp, insertApp, replaceApp } from "../../kv/apps/apps.ts";
import { authorize } from "../policy.ts";
import type { Actor } from "../principals.ts";
import { checkName } from "../text.ts";
import { checkRedirectUri } from "./apps.ts";
import type { AppCalls } from "./app_call.ts";
import { type Declared, faultsOf, manifestInvalid, readManifest } from "./manifest.ts";
import { requestUrls } from "./manifest_urls.ts";
import { manifestOf } from "./manifest_export.ts";
import { syncInstalls } from "./listeners.ts";

/** A new signing secret: 32 hex characters, as Slack's are. */
const newSigningSecret = () => crypto.getRandomValues(new Uint8Array(16)).toHex();
const newClientSecret = () => `tcs_${randomBase62(40)}`;

/** What a manifest says, as the app keeps it. */
function fieldsOf(d: Declared): Omit<App, "id" | "client_id" | "secret_hash" | "created_at"> {
  return {
    name: checkName("name", d.name.trim()),
    bot_name: checkName("name", d.botName.trim()),
    redirect_uris: [...new Set(d.redirectUris.map(checkRedirectUri))],
    scopes: d.scopes,
    incoming_webhook: d.incomingWebhook,
    slash_commands: d.slashCommands,
    interactivity: d.interactivity,
    event_subscriptions: d.events,
    socket_mode_enabled: d.socketMode,
    app_home: d.appHome,
    shortcuts: d.shortcuts,
    assistant_view: d.assistantView,
    agent_view: d.agentView,
    metadata_subscriptions: d.metadataSubscriptions,
  };
}

/** What an app declares, as its manifest says it. */
export const declaredOf = (app: App): Declared => ({
  name: app.name,
  botName: app.bot_name ?? app.name,
  redirectUris: app.redirect_uris,
  scopes: app.scopes,
  incomingWebhook: app.incoming_webhook,
  slashCommands: app.slash_commands ?? [],
  interactivity: app.interactivity ?? null,
  events: app.event_subscriptions ?? null,
  socketMode: app.socket_mode_enabled ?? false,
  appHome: app.app_home ?? null,
  shortcuts: app.shortcuts ?? [],
  assistantView: app.assistant_view ?? null,
  agentView: app.agent_view ?? null,
  metadataSubscriptions: app.metadata_subscriptions ?? [],
});

/**
 * The manifest read, and the URLs the service will call checked as a subscription's are (public
 * addresses): every fault of either in one 422, each by its JSON pointer.
 */
async function readChecked(ctx: Ctx, text: string): Promise<ReturnType<typeof readManifest>> {
  let read: ReturnType<typeof readManifest> | null = null;
  let faults: string[] = [];
  try {
    read = readManifest(text);
  } catch (e) {
    faults = faultsOf(e);
  }
  for (const [at, url] of requestUrls(text)) {
    try {
      await resolveTarget(url, { allowPrivate: ctx.settings.webhooks.allowPrivateUrls });
    } catch (e) {
      if (!(e instanceof UnsafeUrlError)) throw e;
      if (!faults.some((f) => f.startsWith(`${at}:`))) faults.push(`${at}: ${e.message}`);
    }
  }
  if (read === null || faults.length > 0) throw manifestInvalid(faults);
  return read;
}

export interface Registered {
  app: App;
  clientSecret: string;
  signingSecret: string;
  warnings: string[];
}

/** Registers an app from its manifest; its client and signing secrets are returned this once. */
export async function createAppFromManifest(
  ctx: Ctx,
  text: string,
  actor: Actor,
): Promise<Registered> {
  authorize(actor, "app.register", {});
  const { declared, warnings } = await readChecked(ctx, text);
  const clientSecret = newClientSecret();
  const signingSecret = newSigningSecret();
  const app: App = {
    id: newId(),
    client_id: `app_${randomBase62(24)}`,
    secret_hash: sha256Hex(clientSecret),
    created_at: nowIso(),
    ...fieldsOf(declared),
    signing_secret: await ctx.keyring.encrypt(signingSecret),
  };
  await insertApp(ctx.kv, app);
  return { app, clientSecret, signingSecret, warnings };
}

async function appEntry(ctx: Ctx, id: string): Promise<Deno.KvEntry<App>> {
  const entry = await getApp(ctx.kv, id);
  if (!entry.value) throw notFound(`No app ${id}.`);
  return entry as Deno.KvEntry<App>;
}

/**
 * Changes an app in place from a manifest: its installs keep their bots and tokens, and take the
 * new commands, events and URLs. An event request URL set or changed is first sent Slack's
 * `url_verification` challenge, signed with the app's signing secret; a wrong answer refuses the
 * change (422 on `manifest`), writing nothing.
 */
export async function updateAppFromManifest(
  ctx: Ctx,
  calls: AppCalls,
  { id, text, actor }: { id: string; text: string; actor: Actor },
): Promise<{ app: App; warnings: string[] }> {
  authorize(actor, "app.register", {});
  const { declared, warnings } = await readChecked(ctx, text);
  const app = await retrying("update app", async () => {
    const entry = await appEntry(ctx, id);
    const next: App = { ...entry.value, ...fieldsOf(declared) };
    const url = declared.socketMode ? null : declared.events?.request_url;
    if (url && url !== entry.value.event_subscriptions?.request_url) {
      await verifyEventsUrl(ctx, calls, { app: next, url });
    }
    return await replaceApp(ctx.kv, entry, next) ? next : null;
  });
  await syncInstalls(ctx, app);
  return { app, warnings };
}

/** Sends Slack's `url_verification` challenge to `url`; refuses unless the app answers it. */
async function verifyEventsUrl(ctx: Ctx, calls: AppCalls, { app, url }: { app: App; url: string }) {
  if (!app.signing_secret) {
    throw invalid(
      "manifest",
      "The app has no signing secret yet: run app:rotate-signing-secret first.",
    );
  }
  const challenge = randomBase62(48);
  const outcome = await calls.post(ctx, {
    url,
    body: JSON.stringify({ token: "", challenge, type: "url_verification" }),
    contentType: "application/json",
    signingSecret: await ctx.keyring.decrypt(app.signing_secret),
  });
  const answer = outcome.response_body ?? "";
  const answered = answer.trim() === challenge || challengeIn(answer) === challenge;
  if (!outcome.succeeded || !answered) {
    const why = outcome.succeeded ? "it did not answer with the challenge" : outcome.error;
    throw invalid(
      "manifest",
      `/settings/event_subscriptions/request_url: the URL did not pass Slack's url_verification (${why}); nothing was changed.`,
    );
  }
}

const challengeIn = (text: string) => {
  try {
    return (JSON.parse(text) as { challenge?: unknown }).challenge;
  } catch {
    return new URLSearchParams(text).get("challenge");
  }
};

/** The app's manifest, as `createAppFromManifest` reads it back into the same app. */
export async function exportManifest(ctx: Ctx, id: string, actor: Actor) {
  authorize(actor, "app.register", {});
  return manifestOf(declaredOf((await appEntry(ctx, id)).value));
}

/**
 * A new signing secret, returned this once; what the service sends the app is signed with it from
 * the next request on, on every instance.
 */
export async function rotateSigningSecret(ctx: Ctx, id: string, actor: Actor): Promise<string> {
  authorize(actor, "app.register", {});
  const secret = newSigningSecret();
  const app = await retrying("rotate signing secret", async () => {
    const entry = await appEntry(ctx, id);
    const next = { ...entry.value, signing_secret: await ctx.keyring.encrypt(secret) };
    return await replaceApp(ctx.kv, entry, next) ? next : null;
  });
  await syncInstalls(ctx, app);
  return secret;
}
