/**
 * Every place a request names a key of a table: `constructor`, `toString` and the other names
 * every plain object inherits are as unknown there as any other word, never a 500 and never
 * something granted (issue 52, item 1: `POST /api/slack/constructor` answered 500).
 */
import assert from "node:assert/strict";
import { api, startServer, workspace } from "./harness.ts";
import { cliRun } from "./processes.ts";
import { readManifest } from "../domain/apps/manifest.ts";
import { slackText } from "../domain/messages/slack_text.ts";
import { isMoved } from "../kv/key_kinds.ts";
import { ApiError } from "../core/errors.ts";

const INHERITED = Object.getOwnPropertyNames(Object.prototype);

const slackCall = (url: string, token: string, method: string, body: unknown) =>
  fetch(`${url}/api/slack/${method}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, body: await r.json() }));

Deno.test("a name every object inherits is no Web API method, block, event type or route", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const general = w.team.general_channel_id;
    for (const name of INHERITED) {
      const method = await slackCall(s.url, w.bot.token, name, {});
      assert.deepEqual([method.status, method.body], [200, { ok: false, error: "unknown_method" }]);
      const block = await slackCall(s.url, w.admin.token, "chat.postMessage", {
        channel: general,
        text: "x",
        blocks: [{ type: name }],
      });
      assert.deepEqual([block.status, block.body.error], [200, "invalid_blocks"], name);
      const element = await api(s, "POST", `/channels/${general}/messages`, {
        token: w.admin.token,
        body: { body: "x", blocks: [{ type: "actions", elements: [{ type: name }] }] },
      });
      assert.equal(element.status, 422, name);
      const events = await api(s, "POST", "/webhooks", {
        token: w.admin.token,
        body: { name: "a", url: "http://127.0.0.1:9/x", events: [name] },
      });
      assert.equal(events.status, 422, name);
      const route = await api(s, "GET", `/${name}`, { token: w.admin.token });
      assert.equal(route.status, 404, name);
    }
  } finally {
    await s.close();
  }
});

Deno.test("a manifest naming an inherited scope, event or field is refused or warned of", () => {
  for (const name of INHERITED) {
    const manifest = (extra: Record<string, unknown>) =>
      JSON.stringify({
        display_information: { name: "App" },
        oauth_config: {
          redirect_urls: ["https://app.example/cb"],
          scopes: { bot: ["chat:write"] },
        },
        ...extra,
      });
    const scope = manifest({ oauth_config: { scopes: { bot: [name] } } });
    assert.throws(() => readManifest(scope), (e) => e instanceof ApiError && e.status === 422);
    const event = manifest({
      settings: {
        event_subscriptions: { request_url: "https://app.example/e", bot_events: [name] },
      },
    });
    // An event the service does not send is ignored with a warning, as Slack's exports carry some.
    assert.equal(readManifest(event).warnings.length, 1, name);
    // JSON.parse makes `__proto__` an own field, as a manifest file would have it.
    const { warnings } = readManifest(manifest({ [name]: 1 }));
    assert.equal(warnings.length, 1, `${name}: ${warnings}`);
  }
});

Deno.test("Slack markup and the store's key table know no inherited name", () => {
  for (const name of INHERITED) {
    assert.equal(slackText({ text: `<!${name}>` }), `@${name}`);
    assert.equal(isMoved(name), false);
  }
});

Deno.test("the admin CLI knows no inherited command", async () => {
  // Unknown commands are refused before any store is opened: nothing to set up.
  const runs = INHERITED.flatMap((name) => [[name], ["help", name]]);
  for (let i = 0; i < runs.length; i += 6) {
    await Promise.all(
      runs.slice(i, i + 6).map(async (args) => {
        const out = await cliRun({}, ...args);
        assert.equal(out.code, 2, `${args}: ${out.stderr}`);
        assert.match(out.stderr, /^Unknown command /, args.join(" "));
      }),
    );
  }
});
