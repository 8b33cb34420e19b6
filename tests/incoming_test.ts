/**
 * Incoming webhooks: Slack-compatible posting through a secret URL, as a bot, into one channel.
 */
import assert from "node:assert/strict";
import { addMemberAsOperator } from "../domain/channels/members.ts";
import { archiveChannel, createChannel } from "../domain/channels/channels.ts";
import { createIncoming, revokeIncomingById } from "../domain/webhooks/incoming.ts";
import type { OutboxEvent } from "../core/types.ts";
import { listAudit } from "../kv/audit.ts";
import { keys } from "../kv/keys.ts";
import { authenticate } from "../domain/people/authenticate.ts";
import {
  api,
  type ApiResponse,
  assertInvalid,
  assertStatus,
  clearOfWindowEdge,
  countKeys,
  type TestServer,
  withWorkspace,
  type Workspace,
} from "./harness.ts";
import { checkResponse } from "./openapi_check.ts";
import { cli, sharedStore, startService } from "./processes.ts";
import { FAST, receiver, subscribe, waitUntil } from "./webhook_receivers.ts";
import { subjectOfPerson } from "../domain/principals.ts";
import { slackSdks } from "./slack_sdks.ts";

/** POSTs to an incoming webhook URL and checks the answer against openapi.yaml. */
async function hook(
  url: string,
  body: BodyInit,
  contentType: string | null = "application/json",
): Promise<ApiResponse> {
  // JSON, as a client that asks for it gets: the message posted (Slack's own "ok" is tested below).
  const headers: Record<string, string> = { Accept: "application/json" };
  if (contentType) headers["Content-Type"] = contentType;
  const res = await fetch(url, { method: "POST", headers, body });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : null;
  checkResponse("POST", new URL(url).pathname, res.status, parsed);
  return { status: res.status, headers: res.headers, body: parsed };
}

const json = (value: unknown) => JSON.stringify(value);

/**
 * A hook for the bot in a channel it joined; its URL and the channel. Made with the domain
 * functions, so it costs the admin's token nothing of its rate limit.
 */
async function botHook(s: TestServer, w: Workspace, name = "alerts") {
  const admin = await authenticate(s.ctx, w.admin.token);
  const channel = (await createChannel(s.ctx, admin, { name, visibility: "public" })).id;
  await addMemberAsOperator(s.ctx, channel, w.bot.user);
  const { hook: made, url } = await createIncoming(s.ctx, {
    channelId: channel,
    botId: w.bot.user.id,
    name: `${name} hook`,
  }, subjectOfPerson(w.admin.user));
  return { id: made.id, url, channel };
}

Deno.test("incoming: JSON {text} posts as the bot and fires message.created in the same commit", async () => {
  const r = receiver();
  await withWorkspace(
    async (s, w) => {
      const h = await botHook(s, w);
      assert.match(h.url, new RegExp(`^${s.url}/hooks/[0-9A-Za-z]{40}$`));
      await subscribe(s, w.admin.token, r.url, { channel_ids: [h.channel] });
      const res = await hook(h.url, json({ text: "Deploy *finished* :tada:" }));
      assertStatus(res, 201);
      const m = res.body.data;
      assert.equal(m.body, "Deploy *finished* :tada:");
      assert.equal(m.type, "standard");
      assert.deepEqual(m.author, { id: w.bot.user.id, name: w.bot.user.name, type: "bot" });
      assert.equal(m.channel_id, h.channel);
      const events: OutboxEvent[] = [];
      for await (const e of s.ctx.kv.list<OutboxEvent>({ prefix: keys.events() })) {
        if ((e.value.data as { id?: string }).id === m.id) events.push(e.value);
      }
      assert.deepEqual(events.map((e) => e.type), ["message.created"]);
      const [delivered] = await r.waitFor(1);
      assert.equal(JSON.parse(delivered.body).data.id, m.id);
      const listed = await api(s, "GET", `/channels/${h.channel}/messages`, {
        token: w.admin.token,
      });
      assert.equal(listed.body.data[0].id, m.id);
    },
    FAST,
    { engine: true },
  ).finally(() => r.close());
});

Deno.test("incoming: answers as Slack does, 200 ok, to a client that doesn't ask for JSON", () =>
  withWorkspace(async (s, w) => {
    const h = await botHook(s, w);
    const res = await fetch(h.url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: json({ text: "build 7 passed" }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain/);
    assert.equal(await res.text(), "ok");
    checkResponse("POST", new URL(h.url).pathname, 200, null);
    const wrong = await fetch(h.url);
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get("allow"), "POST");
    assert.match((await wrong.json()).message, /POST with a JSON body/);
    const listed = await api(s, "GET", `/channels/${h.channel}/messages`, { token: w.admin.token });
    assert.equal(listed.body.data[0].body, "build 7 passed");
  }));

Deno.test({
  name: "incoming: Slack's @slack/webhook client posts and reads Slack's answer",
  ignore: !slackSdks,
  fn: () =>
    withWorkspace(async (s, w) => {
      const { IncomingWebhook } = await import("npm:@slack/webhook@8.0.2");
      const h = await botHook(s, w);
      const sent = await new IncomingWebhook(h.url).send({ text: "from Slack's client" });
      assert.equal(sent.text, "ok");
      const listed = await api(s, "GET", `/channels/${h.channel}/messages`, {
        token: w.admin.token,
      });
      assert.equal(listed.body.data[0].body, "from Slack's client");
    }),
});

Deno.test("incoming: form data with a payload field, urlencoded or multipart", async () => {
  await withWorkspace(async (s, w) => {
    const h = await botHook(s, w);
    const urlencoded = new URLSearchParams({ payload: json({ text: "from a form" }) });
    const a = await hook(h.url, urlencoded.toString(), "application/x-www-form-urlencoded");
    assertStatus(a, 201);
    assert.equal(a.body.data.body, "from a form");
    const form = new FormData();
    form.set("payload", json({ text: "from multipart" }));
    const b = await hook(h.url, form, null);
    assertStatus(b, 201);
    assert.equal(b.body.data.body, "from multipart");
    // What `curl -d '{"text":...}'` sends: JSON typed as a form.
    const c = await hook(h.url, json({ text: "curl -d" }), "application/x-www-form-urlencoded");
    assertStatus(c, 201);
    assertInvalid(
      await hook(h.url, "other=1", "application/x-www-form-urlencoded"),
      "payload",
    );
    assertInvalid(
      await hook(
        h.url,
        new URLSearchParams({ payload: "not json" }).toString(),
        "application/x-www-form-urlencoded",
      ),
      "payload",
    );
  });
});

Deno.test("incoming: Slack's documented payloads post readable text; its other fields are ignored", async () => {
  await withWorkspace(async (s, w) => {
    const h = await botHook(s, w);
    // From Slack's "Sending messages using incoming webhooks" and attachments docs.
    const blocks = await hook(
      h.url,
      json({
        text: "",
        blocks: [
          {
            type: "section",
            text: {
              type: "mrkdwn",
              text: "Danny Torrence left the following review for your property:",
            },
          },
          {
            type: "section",
            block_id: "section567",
            text: {
              type: "mrkdwn",
              text:
                "<https://example.com|Overlook Hotel> \n :star: \n Doors had too many axe holes, guest in room 237 was far too rowdy, whole place felt stuck in the 1920s.",
            },
            accessory: {
              type: "image",
              image_url:
                "https://is5-ssl.mzstatic.com/image/thumb/Purple3/v4/d3/72/5c/d3725c8f-c642-5d69-1904-aa36e4297885/source/256x256bb.jpg",
              alt_text: "Haunted hotel image",
            },
          },
          {
            type: "section",
            block_id: "section789",
            fields: [{ type: "mrkdwn", text: "*Average Rating*\n1.0" }],
          },
        ],
      }),
    );
    assertStatus(blocks, 201);
    // Slack's markup is plain text (decisions: "Incoming webhooks"): a link is "label (url)".
    assert.equal(
      blocks.body.data.body,
      "Danny Torrence left the following review for your property:\n" +
        "Overlook Hotel (https://example.com) \n :star: \n Doors had too many axe holes, guest in " +
        "room 237 was far too rowdy, whole place felt stuck in the 1920s.\n*Average Rating*\n1.0",
    );
    const attachments = await hook(
      h.url,
      json({
        attachments: [
          {
            fallback: "Plain-text summary of the attachment.",
            color: "#2eb886",
            author_name: "Bobby Tables",
            author_link: "http://flickr.com/bobby/",
            image_url: "http://my-website.com/path/to/image.jpg",
            footer: "Slack API",
            ts: 123456789,
          },
        ],
      }),
    );
    assertStatus(attachments, 201);
    assert.equal(attachments.body.data.body, "Plain-text summary of the attachment.");
    assert.equal(attachments.body.data.attachments[0].author_name, "Bobby Tables", "kept");
    const ignored = await hook(
      h.url,
      json({
        text: "Build #42 passed",
        username: "ci-bot",
        icon_emoji: ":ghost:",
        icon_url: "https://example.com/icon.png",
        channel: "#somewhere-else",
        mrkdwn: true,
        unfurl_links: false,
        unfurl_media: false,
        link_names: 1,
        attachments: [{ pretext: "2 of 812 tests were skipped" }],
      }),
    );
    assertStatus(ignored, 201);
    // What Slack shows, the attachments after the text (decisions: "Incoming webhooks").
    assert.equal(ignored.body.data.body, "Build #42 passed\n2 of 812 tests were skipped");
    assert.equal(ignored.body.data.channel_id, h.channel, "`channel` never moves the post");
  });
});

Deno.test("incoming: validation as for messages, on text", async () => {
  await withWorkspace(async (s, w) => {
    const h = await botHook(s, w);
    const before = await countKeys(s.ctx.kv);
    assertInvalid(await hook(h.url, json({})), "text");
    assertInvalid(await hook(h.url, json({ text: "   " })), "text");
    assertInvalid(await hook(h.url, json({ text: 42 })), "text");
    assertInvalid(await hook(h.url, json({ text: "bell \u0007" })), "text");
    assertInvalid(await hook(h.url, json({ text: "x".repeat(10_001) })), "text");
    assertInvalid(await hook(h.url, "[1,2]"), "request");
    assertInvalid(await hook(h.url, "{nope"), "request");
    assertStatus(await hook(h.url, json({ text: "x".repeat(1024 * 1024) })), 413);
    assert.equal(await countKeys(s.ctx.kv), before, "nothing was written");
    assertStatus(await hook(h.url, json({ text: "line one\n\tline two" })), 201);
  });
});

Deno.test("incoming: unknown, revoked and malformed secrets are the same 404", async () => {
  await withWorkspace(async (s, w) => {
    const h = await botHook(s, w);
    const unknown = await hook(`${s.url}/hooks/${"A".repeat(40)}`, json({ text: "hi" }));
    assertStatus(unknown, 404);
    const malformed = await hook(`${s.url}/hooks/not-a-secret%20at-all`, json({ text: "hi" }));
    const changed = h.url.slice(0, -1) + (h.url.endsWith("0") ? "1" : "0");
    const almost = await hook(changed, json({ text: "hi" }));
    await revokeIncomingById(s.ctx, h.id, null);
    const revoked = await hook(h.url, json({ text: "hi" }));
    for (const res of [malformed, almost, revoked]) {
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, unknown.body);
    }
  });
});

Deno.test("incoming: a bot taken out of the channel gets 404; an archived channel 403", async () => {
  await withWorkspace(async (s, w) => {
    const gone = await botHook(s, w, "gone");
    const removed = await api(s, "DELETE", `/channels/${gone.channel}/members/${w.bot.user.id}`, {
      token: w.admin.token,
    });
    assertStatus(removed, 204);
    const res = await hook(gone.url, json({ text: "anyone?" }));
    assertStatus(res, 404);
    assert.match(res.body.message, /no longer a member/);
    const shut = await botHook(s, w, "shut");
    await archiveChannel(s.ctx, await authenticate(s.ctx, w.admin.token), shut.channel);
    const archived = await hook(shut.url, json({ text: "anyone?" }));
    assertStatus(archived, 403);
    assert.match(archived.body.message, /archived/);
  });
});

Deno.test("incoming: each hook has its own rate limit; the platform switch applies", async () => {
  await clearOfWindowEdge();
  await withWorkspace(async (s, w) => {
    const one = await botHook(s, w, "one");
    const two = await botHook(s, w, "two");
    for (let i = 0; i < 3; i++) {
      const ok = await hook(one.url, json({ text: `${i}` }));
      assertStatus(ok, 201);
      assert.equal(ok.headers.get("X-RateLimit-Limit"), "3");
      assert.equal(ok.headers.get("X-RateLimit-Remaining"), String(2 - i));
    }
    const limited = await hook(one.url, json({ text: "too many" }));
    assertStatus(limited, 429);
    assert.ok(Number(limited.headers.get("Retry-After")) >= 1);
    assert.equal(limited.headers.get("X-RateLimit-Reset"), limited.headers.get("Retry-After"));
    assertStatus(await hook(two.url, json({ text: "its own budget" })), 201);
  }, { INTEGRATIONS_API_RATE_LIMIT: "3" });
  await withWorkspace(async (s, w) => {
    const h = await botHook(s, w);
    assertStatus(await hook(h.url, json({ text: "off" })), 404);
  }, { INTEGRATIONS_ENABLED: "false" });
});

Deno.test("incoming: concurrent posts through one hook all land, in order of their commits", async () => {
  await withWorkspace(async (s, w) => {
    const h = await botHook(s, w);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => hook(h.url, json({ text: `burst ${i}` }))),
    );
    assert.deepEqual([...new Set(answers.map((a) => a.status))], [201]);
    const listed = await api(s, "GET", `/channels/${h.channel}/messages`, { token: w.admin.token });
    assert.equal(listed.body.meta.total, 40 + 1, "40 posts and the bot's member_joined notice");
  });
});

Deno.test("incoming: creation rules and audit entries", async () => {
  await withWorkspace(async (s, w) => {
    const general = w.team.general_channel_id;
    await assert.rejects(
      createIncoming(s.ctx, { channelId: general, botId: w.bot.user.id }, null),
      (e: { status: number; errors: Record<string, string[]> }) =>
        e.status === 422 && /member/.test(e.errors.bot[0]),
    );
    await assert.rejects(
      createIncoming(s.ctx, { channelId: general, botId: w.member.user.id }, null),
      (e: { status: number; errors: Record<string, string[]> }) =>
        e.status === 422 && !!e.errors.bot,
    );
    const h = await botHook(s, w);
    await revokeIncomingById(s.ctx, h.id, subjectOfPerson(w.admin.user));
    const audit = (await listAudit(s.ctx.kv, w.team.id, 10))
      .filter((e) => e.action.startsWith("incoming_webhook."))
      .map((e) => [e.action, e.actor_id, e.target_id]);
    assert.deepEqual(audit, [
      ["incoming_webhook.revoked", w.admin.user.id, h.id],
      ["incoming_webhook.created", w.admin.user.id, h.id],
    ]);
    const secret = h.url.split("/").pop()!;
    for await (const e of s.ctx.kv.list({ prefix: [] })) {
      const stored = JSON.stringify(e.value, (_k, v) => typeof v === "bigint" ? `${v}` : v);
      assert.ok(!stored.includes(secret), `the secret is stored in ${e.key}`);
    }
  });
});

Deno.test("incoming: the CLI makes, lists and revokes hooks; a revoke holds in the server at once; no secret in any output", async () => {
  const store = await sharedStore();
  const service = await startService(store.env);
  try {
    const env = store.env;
    const team = await cli(env, "team:create", "--name", "Hooks");
    const bot = await cli(env, "bot:create", "--team", team.id, "--name", "CI");
    await cli(env, "member:add", "--channel", team.general_channel_id, "--user", bot.id);
    const made = await cli(
      env,
      "incoming:create",
      "--channel",
      team.general_channel_id,
      "--bot",
      bot.id,
      "--name",
      "CI builds",
    );
    assert.deepEqual(Object.keys(made).sort(), ["id", "url"]);
    const url = made.url.replace(/^https?:\/\/[^/]+/, service.url);
    const secret = url.split("/").pop();
    assertStatus(await hook(url, json({ text: "build 1 passed" })), 201);
    const listed = await cli(env, "incoming:list", "--team", team.id);
    assert.deepEqual(listed.map((h: { id: string; name: string }) => [h.id, h.name]), [
      [made.id, "CI builds"],
    ]);
    assert.deepEqual(Object.keys(listed[0]).sort(), [
      "bot_id",
      "channel_id",
      "created_at",
      "id",
      "name",
      "revoked_at",
      "verify",
    ]);
    const revoked = await cli(env, "incoming:revoke", "--id", made.id);
    assert.equal(revoked.id, made.id);
    assert.ok(revoked.revoked_at);
    assertStatus(await hook(url, json({ text: "build 2" })), 404);
    const audit = await cli(env, "audit:list", "--team", team.id);
    const shown = JSON.stringify([listed, revoked, audit]) + service.output();
    assert.ok(!shown.includes(secret!), "the secret appears in no output, list or log");
  } finally {
    await service.kill();
    await store.cleanup();
  }
});

Deno.test("incoming: the service's log never holds a hook's secret, even when a request fails", async () => {
  const store = await sharedStore();
  const service = await startService(store.env);
  const r = receiver();
  try {
    const s = store.as(service);
    const w = await import("./harness.ts").then((h) => h.workspace(store.ctx));
    const h = await botHook(s, w);
    const secret = h.url.split("/").pop()!;
    const url = `${service.url}/hooks/${secret}`;
    await hook(url, json({ text: "fine" }));
    await hook(url, "{broken");
    await hook(url, json({ text: "\u0000" }));
    await fetch(url, { method: "GET" }).then((res) => res.body?.cancel());
    await waitUntil(() => service.output().includes("Listening on"));
    assert.ok(!service.output().includes(secret), service.output());
  } finally {
    await r.close();
    await service.kill();
    await store.cleanup();
  }
});

Deno.test("incoming: attachments and Slack's markup arrive as Slack would show them", async () => {
  await withWorkspace(async (s, w) => {
    const h = await botHook(s, w);
    const build = await hook(
      h.url,
      json({
        text: "Build #46 failed",
        attachments: [{ text: "2 tests failed…", fields: [{ title: "Branch", value: "main" }] }],
      }),
    );
    assertStatus(build, 201);
    assert.equal(build.body.data.body, "Build #46 failed\n2 tests failed…\nBranch: main");
    // Slack's documented attachment ("Legacy secondary attachments").
    const documented = await hook(
      h.url,
      json({
        attachments: [{
          fallback: "Required plain-text summary of the attachment.",
          color: "#2eb886",
          pretext: "Optional text that appears above the attachment block",
          author_name: "Bobby Tables",
          author_link: "http://flickr.com/bobby/",
          title: "Slack API Documentation",
          title_link: "https://api.slack.com/",
          text: "Optional text that appears within the attachment",
          fields: [{ title: "Priority", value: "High", short: false }],
          footer: "Slack API",
          ts: 123456789,
        }],
      }),
    );
    assertStatus(documented, 201);
    assert.equal(
      documented.body.data.body,
      "Optional text that appears above the attachment block\nSlack API Documentation\n" +
        "Optional text that appears within the attachment\nPriority: High",
    );
    const markup = await hook(
      h.url,
      json({
        text: "Deployed to <https://example.com|production> by <@U123>, <!here>: " +
          "<https://example.com/runs/9> &lt;ok&gt; &amp; done",
      }),
    );
    assertStatus(markup, 201);
    assert.equal(
      markup.body.data.body,
      "Deployed to production (https://example.com) by @U123, @here: " +
        "https://example.com/runs/9 <ok> & done",
    );
  });
});

Deno.test("incoming: a client that doesn't ask for JSON is refused as Slack's hooks refuse, in plain text", async () => {
  await withWorkspace(async (s, w) => {
    const plain = async (url: string, body: BodyInit, type = "application/json") => {
      const res = await fetch(url, { method: "POST", headers: { "Content-Type": type }, body });
      const text = await res.text();
      checkResponse("POST", new URL(url).pathname, res.status, null);
      assert.match(res.headers.get("Content-Type") ?? "", /^text\/plain/);
      return `${res.status} ${text}`;
    };
    const h = await botHook(s, w);
    assert.equal(await plain(h.url, json({ text: "  " })), "400 no_text");
    assert.equal(await plain(h.url, json({ blocks: [] })), "400 no_text");
    assert.equal(await plain(h.url, "{not json"), "400 invalid_payload");
    assert.equal(
      await plain(h.url, "channel=x", "application/x-www-form-urlencoded"),
      "400 invalid_payload",
    );
    assert.equal(
      await plain(`${s.url}/hooks/${"A".repeat(40)}`, json({ text: "hi" })),
      "404 no_service",
    );
    assert.equal(
      await plain(h.url, json({ text: "x".repeat(1024 * 1024) })),
      "413 request_too_large",
    );
    const gone = await botHook(s, w, "gone");
    await api(s, "DELETE", `/channels/${gone.channel}/members/${w.bot.user.id}`, {
      token: w.admin.token,
    });
    assert.equal(await plain(gone.url, json({ text: "anyone?" })), "403 action_prohibited");
    const shut = await botHook(s, w, "shut");
    await archiveChannel(s.ctx, await authenticate(s.ctx, w.admin.token), shut.channel);
    assert.equal(await plain(shut.url, json({ text: "anyone?" })), "410 channel_is_archived");
    assert.equal(await plain(h.url, json({ text: "still here" })), "200 ok");
  });
});
