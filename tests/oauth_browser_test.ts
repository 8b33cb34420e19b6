/**
 * A real OAuth client, unchanged: oauth4webapi reads our RFC 8414 metadata, sends an admin's
 * headless Chromium to the consent page, takes the code off the redirect, exchanges it with
 * PKCE, calls the API with what it got, and gives it back to uninstall.
 */
import assert from "node:assert/strict";
import * as oauth from "npm:oauth4webapi@3.8.8";
import { browserTest, withBrowser } from "./browser.ts";
import { api, signedInCookie, startServer, workspace } from "./harness.ts";
import { registerApp } from "./oauth_client.ts";
import { userById } from "../domain/people/workspace.ts";

const SHOTS = Deno.env.get("SCREENSHOTS_DIR");
const INSECURE = { [oauth.allowInsecureRequests]: true };

/** The app's side: a loopback page its redirect_uri names, which keeps what it was sent. */
function callbackServer() {
  const hits: URL[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    hits.push(new URL(req.url));
    return new Response("<!doctype html><title>Installed</title><p>Thanks!</p>", {
      headers: { "Content-Type": "text/html" },
    });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/callback`,
    hits,
    close: () => server.shutdown(),
  };
}

for (const width of [1280, 390]) {
  Deno.test({
    name: `oauth: oauth4webapi installs an app through the consent page in Chromium at ${width} px`,
    ...browserTest,
    fn: async () => {
      const s = await startServer();
      const back = callbackServer();
      try {
        const w = await workspace(s.ctx);
        const { app, secret } = await registerApp(s.ctx, {
          redirectUris: [back.url],
          incomingWebhook: true,
        });
        const issuer = new URL(s.ctx.settings.baseUrl);
        const as = await oauth.processDiscoveryResponse(
          issuer,
          await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...INSECURE }),
        );
        const client: oauth.Client = { client_id: app.client_id };
        const verifier = oauth.generateRandomCodeVerifier();
        const state = oauth.generateRandomState();
        const start = new URL(as.authorization_endpoint!);
        start.search = new URLSearchParams({
          response_type: "code",
          client_id: app.client_id,
          redirect_uri: back.url,
          scope: "channels:read messages:write",
          state,
          code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
          code_challenge_method: "S256",
        }).toString();

        await withBrowser(async (browser) => {
          const context = await browser.newContext({ viewport: { width, height: 900 } });
          const [name, value] = (await signedInCookie(s.url, s.ctx, w.admin.user.id)).split("=");
          await context.addCookies([{ name, value, url: s.url }]);
          const page = await context.newPage();
          await page.goto(start.href);
          await page.getByText("Deploy Tracker asks to join").waitFor();
          await page.getByText("Post messages, and edit and delete its own").waitFor();
          const overflow = await page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth",
          ) as number;
          assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
          await page.getByLabel("Post its messages to").selectOption({ label: "#general" });
          if (SHOTS) {
            await page.screenshot({
              path: `${SHOTS}/oauth-consent${width < 600 ? "-phone" : ""}.png`,
            });
          }
          await page.getByRole("button", { name: "Install Deploy Tracker" }).click();
          await page.getByText("Thanks!").waitFor();
          await context.close();
        });

        const params = oauth.validateAuthResponse(as, client, back.hits[0], state);
        const response = await oauth.authorizationCodeGrantRequest(
          as,
          client,
          oauth.ClientSecretBasic(secret),
          params,
          back.url,
          verifier,
          INSECURE,
        );
        const token = await oauth.processAuthorizationCodeResponse(as, client, response);
        assert.equal(token.scope, "channels:read messages:write");
        const posted = await api(s, "POST", `/channels/${w.team.general_channel_id}/messages`, {
          token: token.access_token,
          body: { body: "installed, and posting" },
        });
        assert.equal(posted.status, 201, JSON.stringify(posted.body));
        assert.equal(posted.body.data.author.id, token.bot_user_id);

        await oauth.processRevocationResponse(
          await oauth.revocationRequest(
            as,
            client,
            oauth.ClientSecretBasic(secret),
            token.access_token,
            INSECURE,
          ),
        );
        const after = await api(s, "GET", "/channels", { token: token.access_token });
        assert.equal(after.status, 401, "uninstalled");
        assert.ok((await userById(s.ctx, token.bot_user_id as string))?.deactivated_at);
      } finally {
        await back.close();
        await s.close();
      }
    },
  });
}
