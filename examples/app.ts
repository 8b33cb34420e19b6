/**
 * A small third-party app that installs itself into a team with OAuth 2.0 and PKCE, then posts a
 * message with the bot token it got. No packages: fetch and Web Crypto.
 *
 *   CLIENT_ID=app_... CLIENT_SECRET=tcs_... deno run --allow-net --allow-env examples/app.ts
 *
 * Register it first with `deno task admin app:create` (docs/apps.md), with the redirect URI
 * http://localhost:8001/callback and --incoming-webhook. It listens on 127.0.0.1, port APP_PORT
 * (8001 unless set), and talks to the service at SERVICE_URL (http://localhost:8080 unless set).
 * Open it in a browser signed in to the settings screen as a team admin, and approve.
 */
const clientId = Deno.env.get("CLIENT_ID") ?? "";
const clientSecret = Deno.env.get("CLIENT_SECRET") ?? "";
if (!/^app_\w+$/.test(clientId) || !/^tcs_\w+$/.test(clientSecret)) {
  console.error(
    "Set CLIENT_ID (app_...) and CLIENT_SECRET (tcs_...) to what `deno task admin app:create` " +
      "printed.",
  );
  Deno.exit(1);
}
const service = Deno.env.get("SERVICE_URL") ?? "http://localhost:8080";
const port = Number(Deno.env.get("APP_PORT") ?? 8001);
const redirectUri = `http://localhost:${port}/callback`;

/** The service's endpoints, from its RFC 8414 metadata. */
const meta = await (await fetch(`${service}/.well-known/oauth-authorization-server`)).json();

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
const random = () => base64url(crypto.getRandomValues(new Uint8Array(32)));
const sha256 = async (text: string) =>
  base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));

/** Installs in progress, by `state`: the PKCE verifier each must be redeemed with. */
const pending = new Map<string, string>();

async function startInstall(): Promise<Response> {
  const state = random();
  const verifier = random();
  pending.set(state, verifier);
  const url = new URL(meta.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: "channels:read messages:write",
    state,
    code_challenge: await sha256(verifier),
    code_challenge_method: "S256",
  }).toString();
  return Response.redirect(url.href, 302);
}

const page = (text: string, status = 200) =>
  new Response(`<!doctype html><meta charset="utf-8"><title>Hello App</title><p>${text}</p>`, {
    status,
    headers: { "Content-Type": "text/html; charset=utf-8" },
  });

const escape = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

async function finishInstall(params: URLSearchParams): Promise<Response> {
  const verifier = pending.get(params.get("state") ?? "");
  if (!verifier) return page("This install was not started here; start again.", 400);
  pending.delete(params.get("state")!);
  if (params.get("error")) return page(`Not installed: ${escape(params.get("error")!)}.`);
  const answer = await fetch(meta.token_endpoint, {
    method: "POST",
    headers: {
      Authorization: `Basic ${btoa(`${clientId}:${clientSecret}`)}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: params.get("code") ?? "",
      redirect_uri: redirectUri,
      code_verifier: verifier,
    }),
  });
  const install = await answer.json();
  if (!answer.ok) return page(`Not installed: ${escape(install.error_description)}`, 502);
  const channel = install.incoming_webhook?.channel_id;
  if (channel) {
    await fetch(`${service}/api/v1/channels/${channel}/messages`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${install.access_token}`,
        "Content-Type": "application/json",
      },
      body: JSON.stringify({ body: "Hello App is installed and says hello." }),
    });
  }
  console.log(`installed into ${install.team.name} as bot ${install.bot_user_id}`);
  return page(
    `Installed into ${escape(install.team.name)}. It said hello in the channel you chose.`,
  );
}

Deno.serve({ hostname: "127.0.0.1", port }, (req) => {
  const url = new URL(req.url);
  if (url.pathname === "/") return startInstall();
  if (url.pathname === "/callback") return finishInstall(url.searchParams);
  return page("Not found.", 404);
});
console.log(`Open http://localhost:${port}/ in a browser signed in as a team admin to install.`);
