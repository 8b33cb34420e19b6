/**
 * Socket Mode with a second Slack client nobody here wrote: slack-go's `socketmode` package, as
 * Debian packages it (golang-github-slack-go-slack-dev), given only the API URL and the two
 * tokens (tests/go/socket_app). It connects, is sent a message's event, answers a command in the
 * ack and posts through chat.postMessage.
 */
import assert from "node:assert/strict";
import { api, withWorkspace } from "./harness.ts";
import { watch, type Watched } from "./processes.ts";
import { waitUntil } from "./webhook_receivers.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";
import { createAppToken } from "../domain/apps/socket/app_tokens.ts";

const GOPATH = "/usr/share/gocode";
const hasSlackGo = (() => {
  try {
    Deno.statSync(`${GOPATH}/src/github.com/slack-go/slack/socketmode`);
    return new Deno.Command("go", { args: ["version"], stdout: "null" }).outputSync().success;
  } catch {
    return false;
  }
})();
if (!hasSlackGo) {
  console.warn(
    "SKIPPED: the slack-go test needs Go and Debian's golang-github-slack-go-slack-dev " +
      "(apt-get install golang-github-slack-go-slack-dev); .ci/run installs them.",
  );
}

const MANIFEST = JSON.stringify({
  display_information: { name: "Gopher" },
  features: {
    bot_user: { display_name: "gopher" },
    slash_commands: [{ command: "/goship", description: "Ships from Go" }],
  },
  oauth_config: { scopes: { bot: ["chat:write", "commands", "channels:history"] } },
  settings: {
    event_subscriptions: { bot_events: ["message.channels"] },
    socket_mode_enabled: true,
  },
});

/** Builds the Go app (GOPATH mode, against Debian's sources): the binary's path. */
async function buildGoApp(dir: string): Promise<string> {
  const out = `${dir}/socket_app`;
  const built = await new Deno.Command("go", {
    args: ["build", "-o", out, "."],
    cwd: new URL("./go/socket_app", import.meta.url).pathname,
    env: { GO111MODULE: "off", GOPATH, GOFLAGS: "" },
    stderr: "piped",
  }).output();
  assert.ok(built.success, new TextDecoder().decode(built.stderr));
  return out;
}

Deno.test({
  name: "socket mode: slack-go's socketmode client connects, hears, answers a command and posts",
  ignore: !hasSlackGo,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "slack-go-" });
    let app: Watched | null = null;
    try {
      const binary = await buildGoApp(dir);
      await withWorkspace(async (s, w) => {
        const general = w.team.general_channel_id;
        const made = (await createAppFromManifest(s.ctx, MANIFEST, null)).app;
        const { install, token } = await installApp(s.ctx, {
          app: made,
          teamId: w.team.id,
          scopes: made.scopes,
          channelId: null,
          approvedBy: null,
        });
        await api(s, "POST", `/channels/${general}/members`, {
          token: w.admin.token,
          body: { user_id: install.bot_user_id },
        });
        const appToken = await createAppToken(s.ctx, { appId: made.id, name: null, actor: null });
        app = watch(binary, [], {
          SLACK_BOT_TOKEN: token.value,
          SLACK_APP_TOKEN: appToken.token,
          SLACK_API_URL: `${s.url}/api/slack/`,
        });
        await waitUntil(() => app!.output().includes("connected"), 20_000, "connected")
          .catch((e) => {
            throw new Error(`${e.message}:\n${app!.output()}`);
          });

        await api(s, "POST", `/channels/${general}/messages`, {
          token: w.member.token,
          body: { body: "hello gopher" },
        });
        await waitUntil(() => app!.output().includes("message hello gopher"), 10_000, "event")
          .catch((e) => {
            throw new Error(`${e.message}:\n${app!.output()}`);
          });

        const ran = await api(s, "POST", `/channels/${general}/commands`, {
          token: w.admin.token,
          body: { command: "/goship", text: "prod" },
        });
        assert.equal(ran.body.data.status, "answered", JSON.stringify(ran.body));
        assert.equal(ran.body.data.ephemeral.text, "Go ships prod");
        await waitUntil(
          async () => {
            const page = await api(s, "GET", `/channels/${general}/messages`, {
              token: w.admin.token,
            });
            return page.body.data.some((m: { body: string }) => m.body === "shipped prod from Go");
          },
          10_000,
          "the app's post",
        );
      });
    } finally {
      await (app as Watched | null)?.kill();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
