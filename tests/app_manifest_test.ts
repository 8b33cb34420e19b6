/**
 * Apps made from Slack-style manifests (decisions.md, "What an app declares: a manifest"): every
 * fault named by its JSON pointer with nothing written, unknown fields warned about, export →
 * create → export identical, `url_verification` before an event URL changes, a new signing secret
 * used from the next request, and command names unique in a team.
 */
import assert from "node:assert/strict";
import { stringify } from "npm:yaml@2.9.1";
import { createHmac } from "node:crypto";
import {
  createAppFromManifest,
  exportManifest,
  rotateSigningSecret,
  updateAppFromManifest,
} from "../domain/apps/declared.ts";
import { AppSender } from "../delivery/apps/sender.ts";
import { installApp } from "../domain/apps/installs.ts";
import { listApps } from "../domain/apps/apps.ts";
import { ApiError } from "../core/errors.ts";
import { api, startServer, workspace } from "./harness.ts";
import { cliRun, sharedStore } from "./processes.ts";
import { receiver } from "./webhook_receivers.ts";

const manifest = (url: string, extra: Record<string, unknown> = {}) => ({
  display_information: { name: "Deployer", description: "Ships builds", ...extra },
  features: {
    bot_user: { display_name: "deployer" },
    slash_commands: [{ command: "/deploy", url, description: "Deploys", usage_hint: "[env]" }],
  },
  oauth_config: {
    redirect_urls: ["http://127.0.0.1:9/callback"],
    scopes: { bot: ["chat:write", "commands", "channels:read", "incoming-webhook"] },
  },
  settings: {
    interactivity: { is_enabled: true, request_url: url },
    event_subscriptions: { request_url: url, bot_events: ["message.channels", "app_mention"] },
  },
});

const faultsOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ApiError && e.status === 422, String(e));
    return e.errors!.manifest;
  }
  assert.fail("refused");
};

Deno.test("manifest: every fault is named by its JSON pointer, and nothing is written", async () => {
  const s = await startServer();
  try {
    const bad = {
      display_information: {},
      features: { slash_commands: [{ command: "deploy", url: "ftp://x", description: 5 }] },
      oauth_config: { scopes: { bot: ["chat:write", "admin:everything"] } },
      settings: { event_subscriptions: { bot_events: ["message.channels"] } },
    };
    const faults = await faultsOf(createAppFromManifest(s.ctx, JSON.stringify(bad), null));
    const pointers = faults.map((f) => f.split(":")[0]).sort();
    assert.deepEqual(pointers, [
      "/display_information/name",
      "/features/slash_commands/0/command",
      "/features/slash_commands/0/description",
      "/features/slash_commands/0/url",
      "/oauth_config/scopes/bot/1",
      "/settings/event_subscriptions/request_url",
    ]);
    assert.deepEqual(await listApps(s.ctx, null), [], "nothing written");
    const notText = await faultsOf(createAppFromManifest(s.ctx, "{ not: [json", null));
    assert.deepEqual(notText, ["/: neither JSON nor YAML"]);
  } finally {
    await s.close();
  }
});

Deno.test("manifest: faults of form and private request URLs are named together, in the API and the CLI", async () => {
  const bad = {
    display_information: { name: "Leaky" },
    features: {
      slash_commands: [{ command: "/leak", url: "http://127.0.0.1:9/x", description: "x" }],
    },
    oauth_config: { redirect_urls: ["not a url"], scopes: { bot: ["chat:write", "toString"] } },
    settings: {
      event_subscriptions: { request_url: "http://10.0.0.1/events", bot_events: ["app_mention"] },
    },
  };
  const wanted = [
    "/features/slash_commands/0/url",
    "/oauth_config/redirect_urls/0",
    "/oauth_config/scopes/bot/1",
    "/settings/event_subscriptions/request_url",
  ];
  const s = await startServer({ WEBHOOKS_ALLOW_PRIVATE_URLS: "false" });
  try {
    const faults = await faultsOf(createAppFromManifest(s.ctx, JSON.stringify(bad), null));
    assert.deepEqual(faults.map((f) => f.split(":")[0]).sort(), wanted);
  } finally {
    await s.close();
  }
  const store = await sharedStore({ WEBHOOKS_ALLOW_PRIVATE_URLS: "false" });
  try {
    const file = await Deno.makeTempFile({ suffix: ".json" });
    await Deno.writeTextFile(file, JSON.stringify(bad));
    const out = await cliRun(store.env, "app:create", "--manifest", file);
    assert.equal(out.code, 1);
    assert.equal(out.stderr.trim().split("\n").length, 1, out.stderr);
    for (const at of wanted) assert.ok(out.stderr.includes(`${at}:`), `${at} in ${out.stderr}`);
    await Deno.remove(file);
  } finally {
    await store.cleanup();
  }
});

Deno.test("manifest: YAML or JSON, Slack's scopes mapped, unknown fields warned, export → create → export identical", async () => {
  const s = await startServer();
  try {
    const yaml = stringify(manifest("http://127.0.0.1:9/slack", { background_color: "#123456" }));
    const made = await createAppFromManifest(s.ctx, yaml, null);
    assert.deepEqual(made.warnings, [
      "/display_information/description: ignored",
      "/display_information/background_color: ignored",
    ]);
    assert.deepEqual(made.app.scopes, ["channels:read", "messages:write", "commands"]);
    assert.equal(made.app.incoming_webhook, true);
    assert.match(made.signingSecret, /^[0-9a-f]{32,}$/);
    assert.ok(!JSON.stringify(made.app).includes(made.signingSecret), "kept sealed");

    const exported = await exportManifest(s.ctx, made.app.id, null);
    const again = await createAppFromManifest(s.ctx, JSON.stringify(exported), null);
    assert.deepEqual(again.warnings, []);
    assert.deepEqual(await exportManifest(s.ctx, again.app.id, null), exported);
  } finally {
    await s.close();
  }
});

Deno.test("manifest: a new event URL must answer Slack's url_verification, signed with the app's secret", async () => {
  const s = await startServer();
  const calls = new AppSender();
  const first = receiver();
  let secret = "";
  // Slack's check of its signatures (api.slack.com/authentication/verifying-requests-from-slack);
  // tests/bolt_test.ts has Bolt itself check them.
  const verifying = receiver((n, req) => {
    const body = verifying.hits[n].body;
    const t = req.headers.get("X-Slack-Request-Timestamp");
    const mac = createHmac("sha256", secret).update(`v0:${t}:${body}`).digest("hex");
    const signed = req.headers.get("X-Slack-Signature") === `v0=${mac}`;
    const { challenge } = JSON.parse(body);
    return signed ? Response.json({ challenge }) : new Response("bad signature", { status: 401 });
  });
  const wrong = receiver(() => Response.json({ challenge: "something else" }));
  try {
    const made = await createAppFromManifest(s.ctx, JSON.stringify(manifest(first.url)), null);
    secret = made.signingSecret;
    assert.equal(first.hits.length, 0, "create records the URL as given");

    const refused = await faultsOf(updateAppFromManifest(s.ctx, calls, {
      id: made.app.id,
      text: JSON.stringify(manifest(wrong.url)),
      actor: null,
    }));
    assert.match(refused[0], /^\/settings\/event_subscriptions\/request_url: .*url_verification/);
    assert.deepEqual(
      (await exportManifest(s.ctx, made.app.id, null) as ReturnType<typeof manifest>).settings
        .event_subscriptions.request_url,
      first.url,
      "nothing was changed",
    );

    const { app } = await updateAppFromManifest(s.ctx, calls, {
      id: made.app.id,
      text: JSON.stringify(manifest(verifying.url)),
      actor: null,
    });
    assert.equal(verifying.hits.length, 1);
    assert.equal(JSON.parse(verifying.hits[0].body).type, "url_verification");
    assert.equal(app.event_subscriptions?.request_url, verifying.url);

    // After a rotation the old secret no longer verifies: the same challenge is refused.
    await rotateSigningSecret(s.ctx, made.app.id, null);
    const back = await faultsOf(updateAppFromManifest(s.ctx, calls, {
      id: made.app.id,
      text: JSON.stringify(manifest(`${verifying.url}?again`)),
      actor: null,
    }));
    assert.match(back[0], /HTTP 401|did not answer|url_verification/);
  } finally {
    await calls.close();
    await Promise.all([first.close(), verifying.close(), wrong.close()]);
    await s.close();
  }
});

Deno.test("manifest: a command name is one app's in a team: installing a second refuses, naming both", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const install = async (name: string) => {
      const m = { ...manifest("http://127.0.0.1:9/x"), display_information: { name } };
      const { app } = await createAppFromManifest(s.ctx, JSON.stringify(m), null);
      return await installApp(s.ctx, {
        app,
        teamId: w.team.id,
        scopes: ["commands", "messages:write"],
        channelId: null,
        approvedBy: null,
      });
    };
    await install("First Deployer");
    await assert.rejects(install("Second Deployer"), (e: ApiError) => {
      assert.equal(e.status, 422);
      assert.match(e.message, /\/deploy is taken in this team by First Deployer; Second Deployer/);
      assert.match(
        e.message,
        /Uninstall First Deployer .*app:uninstall --team .* or give Second Deployer another command .*app:update --id /,
      );
      return true;
    });
    const listed = await api(s, "GET", "/commands", { token: w.member.token });
    assert.deepEqual(listed.body.data.map((c: { command: string }) => c.command), ["/deploy"]);
  } finally {
    await s.close();
  }
});

Deno.test("manifest: the CLI prints both secrets once, warns on stderr, refuses in one line", async () => {
  const store = await sharedStore();
  try {
    const file = await Deno.makeTempFile({ suffix: ".yaml" });
    await Deno.writeTextFile(file, stringify(manifest("http://127.0.0.1:9/slack", { color: "x" })));
    const made = await cliRun(store.env, "app:create", "--manifest", file);
    assert.equal(made.code, 0, made.stderr);
    const app = JSON.parse(made.stdout);
    assert.match(app.client_secret, /^tcs_/);
    assert.ok(app.signing_secret);
    assert.match(made.stderr, /warning: manifest \/display_information\/color: ignored/);

    await Deno.writeTextFile(file, "display_information: {}\n");
    const refused = await cliRun(store.env, "app:create", "--manifest", file);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /\/display_information\/name/);
    assert.equal(refused.stdout, "");
  } finally {
    await store.cleanup();
  }
});

Deno.test("manifest: as Slack exports it, with shortcuts, a Home and scopes not offered here", async () => {
  const s = await startServer();
  try {
    const url = "http://127.0.0.1:9/slack/events";
    const exported = {
      _metadata: { major_version: 1, minor_version: 1 },
      display_information: { name: "Starter" },
      features: {
        app_home: {
          home_tab_enabled: true,
          messages_tab_enabled: true,
          messages_tab_read_only_enabled: false,
        },
        bot_user: { display_name: "Starter", always_online: false },
        shortcuts: [{ name: "Run", type: "global", callback_id: "run", description: "Runs" }],
      },
      oauth_config: {
        scopes: { bot: ["chat:write", "files:write", "chat:write.customize", "im:write"] },
      },
      settings: {
        event_subscriptions: { request_url: url, bot_events: ["app_home_opened", "team_join"] },
        interactivity: { is_enabled: true, request_url: url, message_menu_options_url: url },
        org_deploy_enabled: false,
        socket_mode_enabled: false,
        token_rotation_enabled: false,
      },
    };
    const made = await createAppFromManifest(s.ctx, JSON.stringify(exported), null);
    assert.deepEqual(made.app.scopes, ["messages:write"]);
    assert.deepEqual(made.app.shortcuts?.map((x) => x.callback_id), ["run"]);
    assert.equal(made.app.app_home?.home_tab_enabled, true);
    assert.equal(made.app.interactivity?.message_menu_options_url, url);
    assert.deepEqual(made.warnings.sort(), [
      "/_metadata: ignored",
      "/features/app_home/messages_tab_read_only_enabled: ignored",
      "/oauth_config/scopes/bot/1: files:write is not granted here: ignored",
      "/oauth_config/scopes/bot/2: chat:write.customize is not granted here: ignored",
      "/settings/event_subscriptions/bot_events/1: team_join is not sent here: ignored",
      "/settings/org_deploy_enabled: ignored",
      "/settings/token_rotation_enabled: ignored",
    ]);
    const typo = { ...exported, oauth_config: { scopes: { bot: ["chat:wirte"] } } };
    await assert.rejects(
      createAppFromManifest(s.ctx, JSON.stringify(typo), null),
      (e: Error & { errors?: Record<string, string[]> }) =>
        e.errors?.manifest?.[0] === "/oauth_config/scopes/bot/0: unknown scope chat:wirte",
    );
  } finally {
    await s.close();
  }
});

Deno.test("manifest: an agent's, as Slack's agent templates write them, loads and exports back", async () => {
  const s = await startServer();
  try {
    const agent = {
      display_information: { name: "Helper" },
      features: {
        app_home: { home_tab_enabled: false, messages_tab_enabled: true },
        bot_user: { display_name: "Helper", always_online: false },
        assistant_view: {
          assistant_description: "Answers questions about this workspace",
          suggested_prompts: [{ title: "Summarize", message: "Summarize this channel" }],
        },
        agent_view: { agent_description: "The same, in the agent view" },
      },
      oauth_config: {
        scopes: {
          bot: ["assistant:write", "chat:write", "im:history", "metadata.message:read"],
        },
      },
      settings: {
        event_subscriptions: {
          bot_events: [
            "assistant_thread_started",
            "assistant_thread_context_changed",
            "app_context_changed",
            "message.im",
          ],
          metadata_subscriptions: [{ app_id: "*", event_type: "task_created" }],
        },
        interactivity: { is_enabled: false },
        socket_mode_enabled: true,
      },
    };
    const made = await createAppFromManifest(s.ctx, JSON.stringify(agent), null);
    assert.deepEqual(made.warnings, []);
    assert.deepEqual(made.app.scopes, ["messages:read", "messages:write"]);
    assert.deepEqual(made.app.assistant_view, {
      description: "Answers questions about this workspace",
      suggested_prompts: [{ title: "Summarize", message: "Summarize this channel" }],
    });
    assert.equal(made.app.agent_view?.description, "The same, in the agent view");
    assert.deepEqual(
      made.app.event_subscriptions?.bot_events,
      agent.settings.event_subscriptions.bot_events,
    );
    const exported = await exportManifest(s.ctx, made.app.id, null);
    const again = await createAppFromManifest(s.ctx, JSON.stringify(exported), null);
    assert.deepEqual(await exportManifest(s.ctx, again.app.id, null), exported);
  } finally {
    await s.close();
  }
});
