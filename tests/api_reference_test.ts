/**
 * The API reference page, GET /api/v1/docs: openapi.yaml rendered by the vendored Redoc, with no
 * network and under a policy with no inline scripts, in headless Chromium at desk and phone width.
 */
import assert from "node:assert/strict";
import { browserTest, withBrowser } from "./browser.ts";
import { startServer } from "./harness.ts";
import { checkResponse } from "./openapi_check.ts";
import { VERSION } from "../core/version.ts";

const SHOTS = Deno.env.get("SCREENSHOTS_DIR");

async function sha384(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-384", bytes as BufferSource);
  return `sha384-${new Uint8Array(digest).toBase64()}`;
}

Deno.test("api reference: a page with no inline code, whose script is the pinned Redoc", async () => {
  const s = await startServer();
  try {
    const res = await fetch(`${s.url}/api/v1/docs`);
    const html = await res.text();
    checkResponse("GET", "/api/v1/docs", res.status, html);
    assert.equal(res.status, 200);
    const policy = res.headers.get("Content-Security-Policy") ?? "";
    assert.match(policy, /script-src 'self'(;|$)/);
    assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval/);
    const nonce = /'nonce-([0-9a-f]{32})'/.exec(policy)?.[1];
    assert.ok(nonce && html.includes(`nonce="${nonce}"`), "the page carries its policy's nonce");
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)/, "no inline script");
    assert.ok(html.includes(`runs version ${VERSION}`), "the page says the service's version");

    const [, src, integrity] = /<script type="module" src="([^"]+)" integrity="([^"]+)"/
      .exec(html)!;
    const script = await fetch(new URL(src, `${s.url}/api/v1/docs`));
    const bytes = new Uint8Array(await script.arrayBuffer());
    checkResponse("GET", new URL(script.url).pathname, script.status, null);
    assert.equal(script.status, 200);
    assert.match(script.headers.get("Content-Type") ?? "", /^text\/javascript/);
    assert.equal(await sha384(bytes), integrity, "the vendored file is the one the page pins");

    const again = await fetch(`${s.url}/api/v1/docs`);
    await again.body?.cancel();
    assert.notEqual(again.headers.get("Content-Security-Policy"), policy, "a nonce per response");

    const unknown = await fetch(`${s.url}/api/v1/docs/redoc-2.0.0.standalone.js`);
    const body = await unknown.json();
    checkResponse("GET", "/api/v1/docs/redoc-2.0.0.standalone.js", unknown.status, body);
    assert.equal(unknown.status, 404);

    const index = await (await fetch(`${s.url}/`)).json();
    assert.equal(index.links.reference, `${s.ctx.settings.baseUrl}/api/v1/docs`);
  } finally {
    await s.close();
  }
});

Deno.test("api reference: hidden with the rest of /api/v1 when the platform is off", async () => {
  const s = await startServer({ INTEGRATIONS_ENABLED: "false" });
  try {
    const res = await fetch(`${s.url}/api/v1/docs`);
    const body = await res.json();
    checkResponse("GET", "/api/v1/docs", res.status, body);
    assert.equal(res.status, 404);
  } finally {
    await s.close();
  }
});

for (const width of [1280, 390]) {
  Deno.test({
    name: `api reference: renders offline and within its policy at ${width} px`,
    ...browserTest,
    fn: async () => {
      const s = await startServer();
      try {
        await withBrowser(async (browser) => {
          const context = await browser.newContext({ viewport: { width, height: 900 } });
          const offsite: string[] = [];
          // No network: anything not asked of this service fails as it would on a closed host.
          await context.route("**/*", (route) => {
            if (route.request().url().startsWith(s.url)) return route.continue();
            offsite.push(route.request().url());
            return route.abort();
          });
          const page = await context.newPage();
          const refused: string[] = [];
          page.on("console", (m) => {
            if (m.type() === "error") refused.push(m.text().slice(0, 200));
          });
          await page.goto(`${s.url}/api/v1/docs`);
          await page.getByRole("heading", { name: /Team Chat Integrations API/ }).first()
            .waitFor();
          await page.getByText("Every path below is relative to").waitFor();
          if (width > 1000) {
            await page.getByText("messages", { exact: true }).first().click();
            await page.getByText("Post a message", { exact: true }).first().waitFor();
          }
          // Redoc's "docs by Redocly" logo comes from its CDN; the policy refuses it, nothing else.
          const unexpected = refused.filter((text) => !text.includes("cdn.redoc.ly"));
          assert.deepEqual(unexpected, [], "nothing else broke the policy or failed to load");
          assert.ok(offsite.every((url) => url.startsWith("https://cdn.redoc.ly/")), `${offsite}`);
          const overflow = await page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth",
          ) as number;
          assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
          if (SHOTS) {
            const name = width < 600 ? "api-reference-phone" : "api-reference";
            await page.screenshot({ path: `${SHOTS}/${name}.png` });
          }
          await context.close();
        });
      } finally {
        await s.close();
      }
    },
  });
}
