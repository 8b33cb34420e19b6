/**
 * examples/app.ts, as docs/apps.md runs it: it installs itself into a local service through the
 * consent page (an admin's headless Chromium) and posts a message with the token it got.
 */
import assert from "node:assert/strict";
import { browserTest, withBrowser } from "./browser.ts";
import { api, signedInCookie, startServer, workspace } from "./harness.ts";
import { registerApp } from "./oauth_client.ts";
import { freePort, watch } from "./processes.ts";
import { waitUntil } from "./webhook_receivers.ts";

const EXAMPLE = new URL("../examples/app.ts", import.meta.url).pathname;

Deno.test({
  name: "oauth example: examples/app.ts installs itself and says hello",
  ...browserTest,
  fn: async () => {
    const s = await startServer();
    const port = freePort();
    const { app, secret } = await registerApp(s.ctx, {
      redirectUris: [`http://localhost:${port}/callback`],
      incomingWebhook: true,
    });
    const example = watch(Deno.execPath(), ["run", "--allow-net", "--allow-env", EXAMPLE], {
      CLIENT_ID: app.client_id,
      CLIENT_SECRET: secret,
      SERVICE_URL: s.url,
      APP_PORT: String(port),
    });
    try {
      const w = await workspace(s.ctx);
      await waitUntil(() => Promise.resolve(example.output().includes("Open http")), 20_000);
      await withBrowser(async (browser) => {
        const context = await browser.newContext();
        const [name, value] = (await signedInCookie(s.url, s.ctx, w.admin.user.id)).split("=");
        await context.addCookies([{ name, value, url: s.url }]);
        const page = await context.newPage();
        await page.goto(`http://localhost:${port}/`);
        await page.getByLabel("Post its messages to").selectOption({ label: "#general" });
        await page.getByRole("button", { name: "Install Deploy Tracker" }).click();
        await page.getByText(`Installed into ${w.team.name}`).waitFor();
        await context.close();
      });
      const general = w.team.general_channel_id;
      const messages = await api(s, "GET", `/channels/${general}/messages`, {
        token: w.admin.token,
      });
      const hello = messages.body.data.find((m: { body: string }) => m.body.includes("says hello"));
      assert.equal(hello?.author.type, "bot", example.output());
    } finally {
      await example.kill();
      await s.close();
    }
  },
});
