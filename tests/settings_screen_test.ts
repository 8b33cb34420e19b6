/**
 * The settings screen, driven in headless Chromium against a real server over loopback: what a
 * person does there, and what reaches the API and the receivers because of it.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import type { Browser, BrowserContext, Locator, Page } from "npm:playwright-core@1.65.1";
import { listAudit } from "../kv/audit.ts";
import { keys } from "../kv/keys.ts";
import { createLoginLink, LOGIN_LINK_TTL_MS } from "../domain/people/sessions.ts";
import { createToken, listTokens } from "../domain/people/tokens.ts";
import { createUser } from "../domain/people/workspace.ts";
import { createIncoming } from "../domain/webhooks/incoming.ts";
import { addMemberAsOperator } from "../domain/channels/members.ts";
import type { LoginLink, User } from "../core/types.ts";
import { browserTest, withBrowser } from "./browser.ts";
import { api, startServer, type TestServer, type Workspace, workspace } from "./harness.ts";
import { checkResponse } from "./openapi_check.ts";
import { FAST, hmacHex, post, receiver, show, subscribe, waitUntil } from "./webhook_receivers.ts";
import { subjectOfPerson } from "../domain/principals.ts";

const SETTINGS = "/settings/integrations";

/** Where screenshots for the README go: `deno task screenshots` sets it to docs/. */
const SHOTS = Deno.env.get("SCREENSHOTS_DIR");

async function screenshot(page: Page, name: string, fullPage = true) {
  if (SHOTS) await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage });
}

/**
 * Runs `fn` with a server, a workspace and a browser. Every answer the browser gets from the
 * service is checked against openapi.yaml: a page or status it does not describe fails the test.
 */
async function withScreen(
  fn: (
    s: TestServer,
    w: Workspace,
    browser: Browser,
    watch: (c: BrowserContext) => void,
  ) => Promise<void>,
  env: Record<string, string> = {},
) {
  const s = await startServer(env, { engine: true });
  const undocumented: string[] = [];
  const watch = (context: BrowserContext) =>
    context.on("response", (res) => {
      const url = new URL(res.url());
      if (url.origin !== s.url) return;
      try {
        checkResponse(res.request().method(), url.pathname + url.search, res.status(), null);
      } catch (e) {
        undocumented.push((e as Error).message);
      }
    });
  try {
    const w = await workspace(s.ctx);
    await withBrowser((browser) => fn(s, w, browser, watch));
  } finally {
    await s.close();
  }
  assert.deepEqual(undocumented, [], "every answer is described in openapi.yaml");
}

/** Signs `user` in with a fresh login link, in a browser context of its own. */
async function signIn(
  s: TestServer,
  browser: Browser,
  user: User,
  watch: (c: BrowserContext) => void,
  opts: { javaScriptEnabled?: boolean; width?: number } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    javaScriptEnabled: opts.javaScriptEnabled ?? true,
    viewport: { width: opts.width ?? 1280, height: 800 },
  });
  watch(context);
  const page = await context.newPage();
  page.on("dialog", (dialog) => dialog.accept());
  const { url } = await createLoginLink(s.ctx, user.id);
  await useLink(page, url, user.name);
  return { context, page };
}

/** Opens a sign-in link, which uses nothing, and presses its button, which does. */
async function useLink(page: Page, url: string, name: string) {
  await page.goto(url);
  await page.getByRole("button", { name: `Sign in as ${name}` }).click();
  await page.waitForURL((u) => u.pathname === SETTINGS);
}

/** Fills and submits the new-token form on the current page. */
async function createTokenOnPage(form: Page | Locator, name: string, scopes: string[]) {
  await form.getByLabel("Name", { exact: true }).fill(name);
  for (const scope of scopes) await form.getByLabel(scope, { exact: true }).check();
  await form.getByRole("button", { name: /^Create token/ }).click();
}

const rowOf = (page: Page, text: string) => page.locator("tr", { hasText: text });

/**
 * POSTs a form with the browser context's cookies, as its request API would. That API needs
 * Node's `http` options Deno 2.5 (Deno Deploy's) does not implement, so plain fetch sends it.
 */
async function postForm(
  context: BrowserContext,
  url: string,
  opts: { form: Record<string, string>; headers?: Record<string, string> },
) {
  const cookies = await context.cookies(url);
  const res = await fetch(url, {
    method: "POST",
    headers: {
      ...opts.headers,
      Cookie: cookies.map((c) => `${c.name}=${c.value}`).join("; "),
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams(opts.form),
  });
  const text = await res.text();
  return { status: () => res.status, text: () => Promise.resolve(text) };
}

Deno.test(
  "settings screen: a login link signs in once, expires, and sign-out ends the session",
  browserTest,
  async () => {
    await withScreen(async (s, w, browser, watch) => {
      const { context, page } = await signIn(s, browser, w.admin.user, watch);
      await page.getByRole("heading", { name: "Your tokens" }).waitFor();
      assert.equal(
        await page.locator("header.top .sign-out span").innerText(),
        `${w.admin.user.name} · ${w.team.name}`,
        "the header names the person and the team",
      );
      const [cookie] = await context.cookies();
      assert.equal(cookie.name, "tc_session");
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.sameSite, "Strict");
      assert.equal(cookie.secure, false, "Secure only when BASE_URL is https");

      const { url } = await createLoginLink(s.ctx, w.member.user.id);
      const first = await browser.newContext();
      watch(first);
      const previewed = await fetch(url);
      assert.equal(previewed.status, 200, "a link previewer's GET uses nothing");
      await previewed.body?.cancel();
      await useLink(await first.newPage(), url, w.member.user.name);
      const again = await (await browser.newContext()).newPage();
      const reused = await again.goto(url);
      assert.equal(reused?.status(), 410);
      await again.getByText("already used").waitFor();

      const stale = await createLoginLink(s.ctx, w.member.user.id);
      for await (const e of s.ctx.kv.list<LoginLink>({ prefix: keys.loginLinks() })) {
        const expired = new Date(Date.now() - 1).toISOString();
        await s.ctx.kv.set(e.key, { ...e.value, expires_at: expired });
      }
      const late = await (await browser.newContext()).newPage();
      assert.equal((await late.goto(stale.url))?.status(), 410, "expired after 15 minutes");
      await late.getByText("has expired").waitFor();
      assert.equal(LOGIN_LINK_TTL_MS, 15 * 60_000);

      await assert.rejects(
        createLoginLink(s.ctx, w.bot.user.id),
        (e: { status: number; message: string }) =>
          e.status === 422 && /Bots can't/.test(e.message),
      );

      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("heading", { name: "Signed out" }).waitFor();
      const after = await page.goto(`${s.url}${SETTINGS}`);
      assert.equal(after?.status(), 401);
      await page.getByText("login-link").waitFor();
      assert.equal(await countSessions(s), 1, "only the member's session is left");
    });
  },
);

async function countSessions(s: TestServer): Promise<number> {
  let n = 0;
  for await (const _ of s.ctx.kv.list({ prefix: keys.sessions() })) n++;
  return n;
}

Deno.test("settings screen: the cookie is Secure and __Host- when BASE_URL is https", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    s.ctx.settings.baseUrl = "https://chat.example.com";
    const { url } = await createLoginLink(s.ctx, w.admin.user.id);
    const res = await fetch(`${s.url}${new URL(url).pathname}`, {
      method: "POST",
      redirect: "manual",
      headers: { Origin: "https://chat.example.com" },
    });
    await res.body?.cancel();
    assert.equal(res.status, 303);
    const cookie = res.headers.get("set-cookie") ?? "";
    assert.match(cookie, /^__Host-tc_session=/);
    for (const part of ["HttpOnly", "SameSite=Strict", "Secure", "Path=/"]) {
      assert.ok(cookie.includes(part), `${part} in ${cookie}`);
    }
  } finally {
    await s.close();
  }
});

Deno.test(
  "settings screen: a token made on the screen works with its two scopes until revoked",
  browserTest,
  async () => {
    await withScreen(async (s, w, browser, watch) => {
      // Without JavaScript: the screen must not need it.
      const { page } = await signIn(s, browser, w.member.user, watch, { javaScriptEnabled: false });
      await page.getByLabel("Name", { exact: true }).fill("ci reader");
      await page.getByRole("button", { name: "Create token" }).click();
      assert.equal(await page.getByText("Choose at least one scope.").count(), 1);
      assert.equal(await page.getByLabel("Name", { exact: true }).inputValue(), "ci reader");

      // Scopes sit by resource: read beside write, every write in one column.
      const scopesOf = async (resource: string) => {
        const boxes = page.getByRole("group", { name: resource, exact: true }).getByRole(
          "checkbox",
        );
        const out = [];
        for (const box of await boxes.all()) {
          out.push({ value: await box.getAttribute("value"), at: (await box.boundingBox())! });
        }
        return out;
      };
      const [messages, reactions] = [await scopesOf("messages"), await scopesOf("reactions")];
      assert.deepEqual(messages.map((m) => m.value), ["messages:read", "messages:write"]);
      assert.deepEqual(reactions.map((r) => r.value), ["reactions:write"]);
      assert.equal(messages[0].at.y, messages[1].at.y, "read beside write");
      assert.equal(reactions[0].at.x, messages[1].at.x, "writes in one column");

      await createTokenOnPage(page, "ci reader", ["channels:read", "messages:write"]);
      const value = await page.locator("#revealed-value").inputValue();
      assert.match(value, /^tcp_/);
      assert.equal(
        await page.locator("button[data-copy]").isVisible(),
        false,
        "no script, no copy button",
      );
      const row = rowOf(page, "ci reader");
      assert.equal(await row.locator("ul.scopes li").count(), 2);
      await screenshot(page, "settings-tokens");

      const general = w.team.general_channel_id;
      assert.equal((await api(s, "GET", "/channels", { token: value })).status, 200);
      const created = await api(s, "POST", `/channels/${general}/messages`, {
        token: value,
        body: { body: "hello from a token made on the screen" },
      });
      assert.equal(created.status, 201);
      assert.equal(created.body.data.author.id, w.member.user.id);
      const refused = await api(s, "POST", "/channels", { token: value, body: { name: "x" } });
      assert.equal(refused.status, 403, "channels:write was not granted");

      await page.goto(`${s.url}${SETTINGS}`);
      assert.ok(!(await page.content()).includes(value), "the value is never shown again");
      await rowOf(page, "ci reader").getByRole("button", { name: "Revoke" }).click();
      await page.getByText("The token is revoked").waitFor();
      assert.equal(await rowOf(page, "ci reader").count(), 0);
      assert.equal((await api(s, "GET", "/channels", { token: value })).status, 401);

      const entries = await listAudit(s.ctx.kv, w.team.id, 2);
      assert.deepEqual(
        entries.map((e) => [e.action, e.actor_id]),
        [["token.revoked", w.member.user.id], ["token.created", w.member.user.id]],
      );
    });
  },
);

Deno.test(
  "settings screen: a failing subscription is seen, fixed, re-enabled and its secret rotated",
  browserTest,
  async () => {
    let broken = true;
    const r = receiver(() => broken ? new Response("down", { status: 500 }) : new Response("ok"));
    try {
      await withScreen(async (s, w, browser, watch) => {
        const general = w.team.general_channel_id;
        const sub = await subscribe(s, w.admin.token, r.url, {
          name: "Deploys",
          channel_ids: [general],
        });
        await post(s, w.admin.token, general, "first");
        await waitUntil(
          async () => (await show(s, w.admin.token, sub.id)).status === "disabled",
          10_000,
          "the subscription disabled",
        );

        const { page } = await signIn(s, browser, w.admin.user, watch);
        await page.getByRole("link", { name: "Outgoing webhooks" }).click();
        const listed = rowOf(page, "Deploys");
        await listed.getByText("disabled").waitFor();
        await listed.getByRole("link", { name: "Deploys" }).click();
        assert.match(await page.locator("dl.facts").innerText(), /#general[\s\S]*Ada Admin/);
        const failures = page.locator("table.deliveries tbody tr");
        assert.equal(await failures.count(), 3);
        assert.equal(await failures.first().locator("td").nth(2).innerText(), "500");
        assert.match(await failures.first().locator("td").nth(4).innerText(), /^\d+ ms$/);
        await screenshot(page, "settings-webhook-failing");

        broken = false;
        await page.getByRole("button", { name: "Re-enable" }).click();
        await page.getByText("active again").waitFor();
        await post(s, w.admin.token, general, "second");
        await r.waitFor(4);
        await waitUntil(async () =>
          (await show(s, w.admin.token, sub.id)).deliveries[0]?.succeeded
        );
        await page.reload();
        const latest = page.locator("table.deliveries tbody tr").first();
        assert.equal(await latest.locator("td").nth(2).innerText(), "200");
        await latest.getByText("ok").waitFor();

        await page.getByRole("button", { name: "Rotate secret" }).click();
        const secret = await page.locator("#revealed-value").inputValue();
        assert.match(secret, /^whsec_/);
        assert.notEqual(secret, sub.secret);
        await post(s, w.admin.token, general, "third");
        const hit = (await r.waitFor(5))[4];
        const signature = hit.headers.get("X-Service-Signature")!;
        const t = /t=(\d+)/.exec(signature)![1];
        const v1 = [...signature.matchAll(/v1=([0-9a-f]{64})/g)].map((m) => m[1]);
        assert.deepEqual(v1, [
          await hmacHex(secret, t, hit.body),
          await hmacHex(sub.secret, t, hit.body),
        ]);

        await page.reload();
        assert.ok(!(await page.content()).includes(secret), "the secret is never shown again");
        await page.locator("table.deliveries tbody tr").first().getByRole("button", {
          name: "Redeliver",
        })
          .click();
        await page.getByText("One more attempt").waitFor();
        await r.waitFor(6);

        const actions = (await listAudit(s.ctx.kv, w.team.id, 3)).map((
          e,
        ) => [e.action, e.actor_id]);
        assert.deepEqual(actions.slice(0, 2), [
          ["webhook.secret_rotated", w.admin.user.id],
          ["webhook.enabled", w.admin.user.id],
        ]);

        await page.getByRole("button", { name: "Delete subscription" }).click();
        await page.getByText("The subscription is deleted").waitFor();
        assert.equal(await rowOf(page, "Deploys").count(), 0);
        assert.equal(
          (await api(s, "GET", `/webhooks/${sub.id}`, { token: w.admin.token })).status,
          404,
        );
      }, { ...FAST, WEBHOOKS_DISABLE_AFTER: "3" });
    } finally {
      await r.close();
    }
  },
);

Deno.test(
  "settings screen: bots are made, given tokens and added to channels; an incoming webhook offers only bots in its channel",
  browserTest,
  async () => {
    await withScreen(async (s, w, browser, watch) => {
      const general = w.team.general_channel_id;
      const made = await api(s, "POST", "/channels", {
        token: w.admin.token,
        body: { name: "deploys", visibility: "public" },
      });
      const deploys = made.body.data.id;
      const { page } = await signIn(s, browser, w.admin.user, watch);
      await page.getByRole("link", { name: "Incoming webhooks" }).click();
      await page.getByRole("link", { name: "add a bot to a channel" }).waitFor();

      await page.getByRole("link", { name: "Bots" }).click();
      await page.getByRole("form", { name: "New bot" }).getByLabel("Name").fill("deploy-bot");
      await page.getByRole("button", { name: "Create bot" }).click();
      await page.getByRole("heading", { name: "deploy-bot" }).waitFor();
      const section = page.locator("section.bot", { hasText: "deploy-bot" });
      await section.getByText("New token for deploy-bot").click();
      await createTokenOnPage(section, "deployer", ["channels:read"]);
      const botToken = await page.locator("#revealed-value").inputValue();
      assert.match(botToken, /^tcb_/);
      assert.equal((await api(s, "GET", "/channels", { token: botToken })).status, 200);

      await addOnPage(page, "deploy-bot", "#general");
      const theirs = (await api(s, "GET", "/channels", { token: botToken })).body.data;
      assert.deepEqual(theirs.map((c: { name: string }) => c.name), ["general"]);
      const other = page.locator("section.bot", { hasText: w.bot.user.name });
      await addOnPage(page, w.bot.user.name, "#deploys");
      await other.getByRole("listitem").filter({ hasText: "#deploys" }).getByRole("button", {
        name: "Remove",
      }).click();
      await page.getByText("The bot has left the channel").waitFor();
      await addOnPage(page, w.bot.user.name, "#deploys");
      const list = page.getByRole("list", { name: "Channels deploy-bot is in" });
      assert.deepEqual(await list.getByRole("listitem").allInnerTexts(), ["#general"]);
      await screenshot(page, "settings-bots");

      await page.getByRole("link", { name: "Incoming webhooks" }).click();
      const target = page.getByLabel("Posts into, as");
      assert.deepEqual(await target.locator("option").allInnerTexts(), [
        `#deploys as ${w.bot.user.name}`,
        "#general as deploy-bot",
      ]);
      await page.getByLabel("Name").fill("Build alerts");
      await target.selectOption({ label: `#deploys as ${w.bot.user.name}` });
      // Someone takes the bot out of the channel while the form is open.
      const out = await api(s, "DELETE", `/channels/${deploys}/members/${w.bot.user.id}`, {
        token: w.admin.token,
      });
      assert.equal(out.status, 204);
      await page.getByRole("button", { name: "Create incoming webhook" }).click();
      assert.equal(await target.getAttribute("aria-invalid"), "true");
      assert.match(await page.locator("#new-hook-target-error").innerText(), /must be a member/);
      assert.equal(
        await page.getByLabel("Name").inputValue(),
        "Build alerts",
        "what was typed stays",
      );
      assert.deepEqual(await target.locator("option").allInnerTexts(), ["#general as deploy-bot"]);

      await target.selectOption({ label: "#general as deploy-bot" });
      await page.getByRole("button", { name: "Create incoming webhook" }).click();
      const hookUrl = await page.locator("#revealed-value").inputValue();
      assert.ok(hookUrl.startsWith(`${s.url}/hooks/`));
      const posted = await fetch(hookUrl, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ text: "build 42 passed" }),
      });
      assert.equal(posted.status, 201);
      const author = (await posted.json()).data.author;
      assert.equal(author.name, "deploy-bot");
      const members = await api(s, "GET", `/channels/${general}/members`, { token: w.admin.token });
      assert.ok(members.body.data.some((m: { id: string }) => m.id === author.id));

      await page.reload();
      assert.ok(!(await page.content()).includes(hookUrl), "the URL is never shown again");
      await rowOf(page, "Build alerts").getByRole("button", { name: "Revoke" }).click();
      await page.getByText("The incoming webhook is revoked").waitFor();
      const gone = await fetch(hookUrl, { method: "POST", body: JSON.stringify({ text: "x" }) });
      await gone.body?.cancel();
      assert.equal(gone.status, 404);

      // A hook whose sender must sign: its secret is shown once beside the URL, and rotatable.
      await page.getByLabel("Name").fill("GitHub pushes");
      await target.selectOption({ label: "#general as deploy-bot" });
      await page.getByLabel("Senders must sign").selectOption("github");
      await page.getByRole("button", { name: "Create incoming webhook" }).click();
      const signedUrl = await page.locator("#revealed-value").inputValue();
      const secret = await page.locator("#revealed-also").inputValue();
      const body = JSON.stringify({ text: "main: 1 new commit" });
      const sign = (key: string) =>
        `sha256=${createHmac("sha256", key).update(body).digest("hex")}`;
      const postSigned = async (signature?: string) => {
        const res = await fetch(signedUrl, {
          method: "POST",
          headers: signature ? { "X-Hub-Signature-256": signature } : {},
          body,
        });
        await res.body?.cancel();
        return res.status;
      };
      assert.deepEqual([await postSigned(), await postSigned(sign(secret))], [401, 200]);
      await rowOf(page, "GitHub pushes").getByRole("button", { name: "Rotate signing secret" })
        .click();
      const rotated = await page.locator("#revealed-value").inputValue();
      assert.notEqual(rotated, secret);
      assert.equal(await postSigned(sign(rotated)), 200);
    });
  },
);

/** Adds a bot to a channel with the form in its section of the bots page. */
async function addOnPage(page: Page, bot: string, channel: string) {
  const form = page.getByRole("form", { name: `Add ${bot} to a channel` });
  await form.getByLabel("Add to a channel").selectOption({ label: channel });
  await form.getByRole("button", { name: `Add ${bot}` }).click();
  await page.getByText("The bot is in the channel now").waitFor();
}

Deno.test(
  "settings screen: the audit log names the person, newest first, 50 to a page",
  browserTest,
  async () => {
    await withScreen(async (s, w, browser, watch) => {
      // Spread over three holders: nobody may hold more than 25 live tokens.
      const bot2 = await createUser(
        s.ctx,
        { teamId: w.team.id, name: "Second Bot", type: "bot" },
        null,
      );
      const holders = [w.admin.user, w.bot.user, bot2];
      for (let i = 0; i < 55; i++) {
        await createToken(s.ctx, holders[i % 3], {
          scopes: ["channels:read"],
          name: `t${i}`,
          actor: subjectOfPerson(w.admin.user),
        });
      }
      const { page } = await signIn(s, browser, w.admin.user, watch);
      await page.getByRole("link", { name: "Audit log" }).click();
      const rows = page.locator("table.audit tbody tr");
      assert.equal(await rows.count(), 50);
      const newest = await listAudit(s.ctx.kv, w.team.id, 1000);
      assert.equal(await rows.first().getAttribute("data-audit-id"), newest[0].id);
      assert.match(await rows.first().innerText(), /token\.created\s+Ada Admin/);
      await screenshot(page, "settings-audit", false);
      await page.getByRole("link", { name: "Older entries" }).click();
      assert.equal(await rows.count(), newest.length - 50);
      assert.equal(await rows.first().getAttribute("data-audit-id"), newest[50].id);
      assert.equal(await page.getByRole("link", { name: "Older entries" }).count(), 0);
    });
  },
);

Deno.test(
  "settings screen: forms without this session's CSRF token, or from another origin, are refused",
  browserTest,
  async () => {
    await withScreen(async (s, w, browser, watch) => {
      const a = await signIn(s, browser, w.admin.user, watch);
      const b = await signIn(s, browser, w.admin.user, watch);
      const csrfOf = (page: Page) => page.locator("input[name=_csrf]").first().inputValue();
      const [mine, theirs] = [await csrfOf(a.page), await csrfOf(b.page)];
      assert.notEqual(mine, theirs);
      const tokens = async () => (await listAudit(s.ctx.kv, w.team.id, 100)).length;
      const before = await tokens();
      const target = `${s.url}${SETTINGS}/tokens`;
      const form = { name: "sneaky", scopes: "channels:read" };

      for (
        const [what, extra] of [["no token", {}], ["another session's", { _csrf: theirs }]] as const
      ) {
        const res = await postForm(a.context, target, { form: { ...form, ...extra } });
        assert.equal(res.status(), 403, what);
        assert.match(await res.text(), /Refused/);
      }
      const foreign = await postForm(a.context, target, {
        form: { ...form, _csrf: mine },
        headers: { Origin: "http://evil.example" },
      });
      assert.equal(foreign.status(), 403, "another origin, even with the right token");

      // A real page elsewhere that posts the form at our screen as soon as it loads.
      const evil = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
        new Response(
          `<form method="post" action="${target}"><input name="name" value="sneaky">` +
            `<input name="scopes" value="channels:read"><input name="_csrf" value="${mine}"></form>` +
            `<script>document.forms[0].submit()</script>`,
          { headers: { "Content-Type": "text/html" } },
        ));
      try {
        const attacked = await a.context.newPage();
        const answered = attacked.waitForResponse((r) => r.url() === target);
        await attacked.goto(`http://127.0.0.1:${evil.addr.port}/`);
        assert.equal((await answered).status(), 403);
      } finally {
        await evil.shutdown();
      }
      assert.equal(await tokens(), before, "nothing was made");
      const ok = await postForm(a.context, target, { form: { ...form, _csrf: mine } });
      assert.equal(ok.status(), 200, "the same form with this session's token is accepted");
    });
  },
);

Deno.test(
  "settings screen: a subscription's five latest deliveries show on a phone, the rest fold away",
  browserTest,
  async () => {
    const r = receiver();
    try {
      await withScreen(async (s, w, browser, watch) => {
        const general = w.team.general_channel_id;
        const sub = await subscribe(s, w.admin.token, r.url, { name: "Busy" });
        for (let i = 0; i < 8; i++) await post(s, w.admin.token, general, `message ${i}`);
        await waitUntil(async () => (await show(s, w.admin.token, sub.id)).deliveries.length === 8);

        const { page } = await signIn(s, browser, w.admin.user, watch, { width: 390 });
        await page.goto(`${s.url}${SETTINGS}/webhooks/${sub.id}`);
        const rows = page.locator("table.deliveries tbody tr");
        assert.equal(await rows.count(), 8);
        const shown = async () =>
          (await Promise.all((await rows.all()).map((r) => r.isVisible())))
            .filter(Boolean).length;
        assert.equal(await shown(), 5);
        const height = await page.evaluate("document.documentElement.scrollHeight") as number;
        // Its forms and five deliveries: the other three, unfolded, would add a card each.
        assert.ok(height < 2600, `the page is ${height} px tall at 390`);
        await page.locator("summary", { hasText: "3 earlier deliveries" }).click();
        assert.equal(await shown(), 8);
      });
    } finally {
      await r.close();
    }
  },
);

Deno.test(
  "settings screen: a member manages its own tokens and sees nothing of the admin parts",
  browserTest,
  async () => {
    await withScreen(async (s, w, browser, watch) => {
      const { context, page } = await signIn(s, browser, w.member.user, watch, { width: 390 });
      await page.locator("summary", { hasText: "Menu" }).click();
      const nav = page.getByRole("navigation", { name: "Integrations" });
      assert.deepEqual(await nav.getByRole("link").allInnerTexts(), ["Your tokens"]);
      const html = await page.content();
      for (const part of ["/bots", "/webhooks", "/incoming", "/audit"]) {
        assert.ok(!html.includes(`${SETTINGS}${part}`), `no link to ${part}`);
        const res = await page.goto(`${s.url}${SETTINGS}${part}`);
        assert.equal(res?.status(), 404, part);
      }
      await page.goto(`${s.url}${SETTINGS}`);
      const csrf = await page.locator("input[name=_csrf]").first().inputValue();
      const [{ id }] = await listTokens(s.ctx, w.admin.user.id);
      for (const path of [`/tokens/${id}/revoke`, `/bots`, `/incoming`]) {
        const res = await postForm(context, `${s.url}${SETTINGS}${path}`, {
          form: { _csrf: csrf, name: "x" },
        });
        assert.equal(res.status(), 404, path);
      }
      assert.equal((await api(s, "GET", "/channels", { token: w.admin.token })).status, 200);
      await screenshot(page, "settings-member-phone");
    });
  },
);

Deno.test(
  "settings screen: every page fits a phone; the owner changes where its subscription delivers",
  browserTest,
  async () => {
    const old = receiver(() => new Response("down", { status: 500 }));
    const fresh = receiver();
    try {
      await withScreen(async (s, w, browser, watch) => {
        const general = w.team.general_channel_id;
        const mine = await subscribe(
          s,
          w.admin.token,
          `${old.url}/a/long/path/that/keeps/going/and/going?with=a-query&and=more`,
          { name: "Pager bridge" },
        );
        const theirs = await subscribe(s, w.member.token, fresh.url, { name: "Mo's feed" });
        await post(s, w.admin.token, general, "fails at the old url");
        await waitUntil(async () => (await show(s, w.admin.token, mine.id)).deliveries.length > 0);
        await addMemberAsOperator(s.ctx, general, w.bot.user);
        await createIncoming(s.ctx, { channelId: general, botId: w.bot.user.id }, null);

        const { page } = await signIn(s, browser, w.admin.user, watch, { width: 390 });
        const pages = [
          "",
          "/bots",
          "/webhooks",
          `/webhooks/${mine.id}`,
          "/event-types",
          "/incoming",
          "/audit",
        ];
        for (const path of [...pages, `/webhooks/${theirs.id}`]) {
          await page.goto(`${s.url}${SETTINGS}${path}`);
          const width = await page.evaluate("document.documentElement.scrollWidth") as number;
          assert.ok(width <= 390, `${path || "/"} is ${width} px wide at 390`);
          const header = (await page.locator("header.top").boundingBox())!;
          assert.ok(
            header.height <= 64,
            `${path || "/"}: the header is one row (${header.height})`,
          );
          assert.ok(!/\skey="/.test(await page.content()), `${path || "/"}: no key attributes`);
        }
        await page.goto(`${s.url}${SETTINGS}/webhooks/${mine.id}`);
        await screenshot(page, "settings-webhook-phone");
        await page.locator("summary", { hasText: "Menu" }).click();
        const menu = page.getByRole("navigation", { name: "Integrations" });
        assert.equal(await menu.getByRole("link").count(), 7);
        await screenshot(page, "settings-menu-phone", false);
        await menu.getByRole("link", { name: "Audit log" }).click();
        await page.getByRole("heading", { name: "Audit log" }).waitFor();

        await page.goto(`${s.url}${SETTINGS}/webhooks/${theirs.id}`);
        await page.getByText("Only its owner, Mo Member, can change its URL").waitFor();
        assert.equal(await page.getByRole("button", { name: "Save" }).count(), 0);

        await page.goto(`${s.url}${SETTINGS}/webhooks/${mine.id}`);
        const form = page.getByRole("form", { name: "Change where it delivers" });
        await form.getByLabel("URL", { exact: true }).fill("not a url");
        await form.getByRole("button", { name: "Save" }).click();
        assert.equal(await form.getByLabel("URL", { exact: true }).inputValue(), "not a url");
        await form.getByLabel("URL", { exact: true }).fill(fresh.url);
        await form.getByLabel("reaction.added").check();
        await form.getByRole("button", { name: "Save" }).click();
        await page.getByText("Saved: from the next event on").waitFor();
        const now = await show(s, w.admin.token, mine.id);
        assert.equal(now.url, fresh.url);
        assert.deepEqual(now.events, ["message.created", "reaction.added"]);
        await post(s, w.admin.token, general, "to the new url");
        await fresh.waitFor(1);

        await page.getByRole("button", { name: "Rotate secret" }).click();
        const box = page.locator("section.revealed");
        await box.getByText("every delivery carries two signatures").waitFor();
        await screenshot(page, "settings-rotated-phone");
      });
    } finally {
      await old.close();
      await fresh.close();
    }
  },
);

for (const width of [1280, 390]) {
  Deno.test(
    `settings screen: a subscription is made and sent a test from the screen, at ${width} px`,
    browserTest,
    async () => {
      const r = receiver();
      try {
        await withScreen(async (s, w, browser, watch) => {
          const { page } = await signIn(s, browser, w.admin.user, watch, { width });
          // On a phone the pages are behind the menu.
          if (width < 600) await page.locator("summary", { hasText: "Menu" }).click();
          await page.getByRole("link", { name: "Outgoing webhooks" }).click();
          const form = page.getByRole("form", { name: "New subscription" });
          await form.getByLabel("Name").fill("CI receiver");
          await form.getByLabel("URL").fill(r.url);
          await form.getByLabel("reaction.added").check();
          await form.getByLabel("Signed with").selectOption("standard");
          await form.getByRole("button", { name: "Create subscription" }).click();
          const secret = await page.locator("#revealed-value").inputValue();
          assert.match(secret, /^whsec_/);
          await page.getByRole("heading", { name: "CI receiver" }).waitFor();

          await page.getByLabel("Event").selectOption("message.created");
          await page.getByRole("button", { name: "Send test" }).click();
          await page.getByText(/Test sent: the receiver answered HTTP 200/).waitFor();
          const [hit] = await r.waitFor(1);
          const envelope = JSON.parse(hit.body);
          assert.equal(envelope.type, "message.created");
          assert.match(envelope.data.body, /sample/);
          assert.equal(hit.headers.get("webhook-id"), envelope.id, "signed as chosen");
          assert.equal(hit.headers.has("x-service-signature"), false);
          const signing = page.getByRole("form", { name: "How it is signed" });
          await signing.getByLabel("Signed with").selectOption("both");
          await signing.getByRole("button", { name: "Sign this way" }).click();
          await page.getByText("its next deliveries are signed that way").waitFor();
          const listed = await api(s, "GET", "/webhooks", { token: w.admin.token });
          assert.equal(listed.body.data[0].signature_scheme, "both");
          await page.locator("tr[data-delivery-id]").first().waitFor();
          const wide = await page.evaluate("document.documentElement.scrollWidth") as number;
          assert.ok(wide <= width, `${wide} px wide at ${width}`);

          // The catalog shows each type's example and sends it to a subscription as a test.
          await page.goto(`${s.url}${SETTINGS}/webhooks`);
          await page.getByRole("link", { name: "Event types" }).click();
          const poll = page.locator("details[data-event-type='poll.closed']");
          await poll.locator("summary").first().click();
          // The descriptions' `code` reads as code, not as backticks.
          const described = await page.locator("details[data-event-type] > summary")
            .allTextContents();
          assert.ok(described.every((d) => !d.includes("`")), "no raw backticks");
          await poll.getByText('"multiple": false').waitFor();
          const send = poll.getByRole("form", { name: "Send a poll.closed example" });
          await send.getByLabel("To").selectOption({ label: `CI receiver (${r.url})` });
          await send.getByRole("button", { name: "Send example" }).click();
          await page.getByText(/Test sent: the receiver answered HTTP 200/).waitFor();
          const closed = JSON.parse((await r.waitFor(2))[1].body);
          assert.equal(closed.type, "poll.closed");
          assert.equal(closed.data.poll.options.length, 2);
          // Redirected after the POST: a reload shows the outcome and sends nothing more.
          assert.match(page.url(), /\/webhooks\/[0-9a-f-]{36}\?tested=[0-9a-f-]{36}$/);
          await page.reload();
          await page.getByText(/Test sent: the receiver answered HTTP 200/).waitFor();
          assert.equal((await r.waitFor(2)).length, 2, "the reload sent no third example");
        }, { WEBHOOKS_ALLOW_PRIVATE_URLS: "true" });
      } finally {
        await r.close();
      }
    },
  );
}
