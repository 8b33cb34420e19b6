import assert from "node:assert/strict";
import type { Ctx } from "../domain/context.ts";
import { loadSettings } from "../core/settings.ts";
import { SCOPES } from "../core/types.ts";
import { openStore } from "../kv/store/open.ts";
import { loadKeyring } from "../domain/data/app_key.ts";
import { createApp } from "../routes/app.ts";
import { api, appParts, type TestServer } from "./harness.ts";
import { sharedStore, startService } from "./processes.ts";

const root = new URL("..", import.meta.url).pathname;

/**
 * The server as main.ts builds it, on a KV file in a fresh folder, so the CLI (another process)
 * and the server share the store and the APP_KEY file while both run.
 */
async function startFileServer(): Promise<TestServer & { kvPath: string }> {
  const dir = await Deno.makeTempDir({ prefix: "cli_test_" });
  const kvPath = `${dir}/kv.sqlite3`;
  const settings = loadSettings({ KV_PATH: kvPath, INTEGRATIONS_API_RATE_LIMIT: "100000" });
  const kv = await openStore(settings);
  const ctx: Ctx = { kv, settings, keyring: await loadKeyring(settings, kv) };
  const app = createApp(ctx, appParts(ctx));
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, app.fetch);
  const url = `http://127.0.0.1:${server.addr.port}`;
  ctx.settings.baseUrl = url;
  return {
    ctx,
    url,
    kvPath,
    async close() {
      await server.shutdown();
      await app.close();
      kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  // deno-lint-ignore no-explicit-any
  json: any;
}

/**
 * Where the CLI works: on the server's KV file (`local`), or through the server's admin path with
 * `ADMIN_URL` and its APP_KEY, given a KV_PATH it could not open (`remote`).
 */
interface Target {
  kvPath: string;
  url: string;
  mode: "local" | "remote";
}

/** The environment an operator runs the CLI with, in `target`'s mode. */
async function envOf(target: Target | string): Promise<Record<string, string>> {
  if (typeof target === "string") return { KV_PATH: target, APP_KEY: "" };
  if (target.mode === "local") return { KV_PATH: target.kvPath, APP_KEY: "" };
  const keyFile = target.kvPath.replace(/[^/]*$/, "app.key");
  return {
    ADMIN_URL: target.url,
    APP_KEY: (await Deno.readTextFile(keyFile)).trim(),
    KV_PATH: "/nonexistent/kv.sqlite3",
  };
}

/** Runs `deno task admin ...` exactly as an operator would, against the server. */
async function admin(target: Target | string, ...args: string[]): Promise<CliResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "admin", ...args],
    cwd: root,
    env: { ...await envOf(target), NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  const json = out.code === 0 && /^[[{]/.test(stdout) ? JSON.parse(stdout) : null;
  return { code: out.code, stdout, stderr, json };
}

/** Runs a command that must succeed and returns its JSON. */
async function ok(target: Target | string, ...args: string[]) {
  const r = await admin(target, ...args);
  assert.equal(r.code, 0, `${args.join(" ")} failed: ${r.stderr}`);
  return r.json;
}

/**
 * A test of the CLI against a running server, twice: on its store, and through its admin path
 * (`ADMIN_URL`), with the same assertions: the same flags, output, errors and exit codes.
 */
function inBothModes(name: string, fn: (s: TestServer, target: Target) => Promise<void>) {
  for (const mode of ["local", "remote"] as const) {
    Deno.test(`cli${mode === "remote" ? " through ADMIN_URL" : ""}: ${name}`, async () => {
      const s = await startFileServer();
      try {
        await fn(s, { kvPath: s.kvPath, url: s.url, mode });
      } finally {
        await s.close();
      }
    });
  }
}

const status = async (s: TestServer, token: string) =>
  (await api(s, "GET", "/channels", { token })).status;

inBothModes(
  "tokens created, revoked and rotated by the CLI act on the running server",
  async (s, kv) => {
    const team = await ok(kv, "team:create", "--name", "Acme");
    assert.equal(team.name, "Acme");
    const user = await ok(kv, "user:create", "--team", team.id, "--name=Ada", "--role", "admin");
    assert.deepEqual(user, { id: user.id, name: "Ada", type: "human", role: "admin" });

    const created = await admin(kv, "token:create", "--user", user.id, "--scopes", "all");
    assert.equal(created.code, 0, created.stderr);
    const first = created.json;
    assert.match(first.token, /^tcp_[0-9A-Za-z]{38}$/);
    assert.deepEqual(first.scopes, [...SCOPES]);
    assert.equal(first.expires_at, null);
    assert.ok(!created.stderr.includes(first.token));

    const list = await api(s, "GET", "/channels", { token: first.token });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.data.map((c: { id: string }) => c.id), [team.general_channel_id]);

    const pasted = await admin(kv, "token:revoke", "--id", first.token);
    assert.equal(pasted.code, 2);
    assert.ok(!pasted.stderr.includes(first.token), "a token passed by mistake is not echoed");
    assert.equal(await status(s, first.token), 200);

    const revoked = await ok(kv, "token:revoke", "--id", first.id);
    assert.equal(revoked.id, first.id);
    assert.ok(Date.parse(revoked.revoked_at));
    assert.equal(await status(s, first.token), 401);

    const second = await ok(kv, "token:create", "--user", user.id, "--scopes", "channels:read");
    assert.deepEqual(second.scopes, ["channels:read"]);
    assert.equal(await status(s, second.token), 200);
    const rotated = await ok(kv, "token:rotate", "--id", second.id);
    assert.notEqual(rotated.id, second.id);
    assert.equal(await status(s, second.token), 401);
    assert.equal(await status(s, rotated.token), 200);
    const write = await api(s, "POST", "/channels", {
      token: rotated.token,
      body: { name: "ops", visibility: "public" },
    });
    assert.equal(write.status, 403, "a rotated token keeps its scopes");

    const audit = await admin(kv, "audit:list", "--team", team.id);
    assert.equal(audit.code, 0, audit.stderr);
    assert.deepEqual(
      audit.json.map((e: { action: string; target_id: string }) => [e.action, e.target_id]),
      [
        ["token.rotated", second.id],
        ["token.created", second.id],
        ["token.revoked", first.id],
        ["token.created", first.id],
      ],
    );
    for (const entry of audit.json) {
      assert.equal(entry.actor_id, null);
      assert.equal(entry.actor_type, "system");
    }
    for (const value of [first.token, second.token, rotated.token]) {
      assert.ok(!audit.stdout.includes(value), "no audit entry holds a token value");
    }
    assert.ok(!/tc[bp]_/.test(audit.stdout));
    assert.equal((await ok(kv, "audit:list", "--team", team.id, "--limit", "1")).length, 1);
  },
);

inBothModes("bots, expiring tokens, emoji, direct messages and members", async (s, kv) => {
  const team = await ok(kv, "team:create", "--name", "Acme");
  const ada = await ok(kv, "user:create", "--team", team.id, "--name", "Ada");
  assert.equal(ada.role, "member");
  const bob = await ok(kv, "user:create", "--team", team.id, "--name", "Bob");
  const bot = await ok(kv, "bot:create", "--team", team.id, "--name", "Robo");
  assert.deepEqual(bot, { id: bot.id, name: "Robo", type: "bot" });

  const botToken = await ok(
    kv,
    "token:create",
    ...["--user", bot.id, "--scopes", "channels:read, members:read", "--expires-in", "3600"],
  );
  assert.match(botToken.token, /^tcb_/);
  const expiresIn = Date.parse(botToken.expires_at) - Date.now();
  assert.ok(expiresIn > 3_500_000 && expiresIn <= 3_600_000, botToken.expires_at);
  const adaToken = (await ok(kv, "token:create", "--user", ada.id, "--scopes", "all")).token;

  assert.deepEqual(await ok(kv, "emoji:create", "--team", team.id, "--name", "shipit"), {
    name: "shipit",
  });

  const dm = await ok(kv, "dm:create", "--users", `${ada.id},${bob.id}`);
  const adaChannels = await api(s, "GET", "/channels", { token: adaToken });
  const listed = adaChannels.body.data.find((c: { id: string }) => c.id === dm.id);
  assert.equal(listed?.is_direct, true);

  const ops = await api(s, "POST", "/channels", {
    token: adaToken,
    body: { name: "ops", visibility: "private" },
  });
  assert.equal(ops.status, 201);
  const channel = ops.body.data.id;
  assert.equal(
    (await api(s, "GET", `/channels/${channel}`, { token: botToken.token })).status,
    404,
  );
  assert.deepEqual(await ok(kv, "member:add", "--channel", channel, "--user", bot.id), {
    channel_id: channel,
    user_id: bot.id,
    added: true,
  });
  const members = await api(s, "GET", `/channels/${channel}/members`, { token: botToken.token });
  assert.equal(members.status, 200);
  assert.deepEqual(members.body.data.map((m: { name: string }) => m.name), ["Ada", "Robo"]);

  // Already so: said, and done (a `set -e` script run twice goes on).
  const again = await admin(kv, "member:add", "--channel", channel, "--user", bot.id);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, /already a member of this channel; nothing changed/);
  assert.deepEqual(JSON.parse(again.stdout), {
    channel_id: channel,
    user_id: bot.id,
    added: false,
  });
  const intoDm = await admin(kv, "member:add", "--channel", dm.id, "--user", bot.id);
  assert.notEqual(intoDm.code, 0);
  assert.match(intoDm.stderr, /direct message/);
  const archived = await api(s, "POST", `/channels/${channel}/archive`, { token: adaToken });
  assert.equal(archived.status, 200);
  const intoArchived = await admin(kv, "member:add", "--channel", channel, "--user", bob.id);
  assert.notEqual(intoArchived.code, 0);
  assert.match(intoArchived.stderr, /archived/);

  const other = await ok(kv, "team:create", "--name", "Other");
  const stranger = await ok(kv, "user:create", "--team", other.id, "--name", "Sam");
  const crossDm = await admin(kv, "dm:create", "--users", `${ada.id},${stranger.id}`);
  assert.notEqual(crossDm.code, 0);
  assert.match(crossDm.stderr, /same team/);
  const crossAdd = await admin(kv, "member:add", "--channel", dm.id, "--user", stranger.id);
  assert.notEqual(crossAdd.code, 0);
});

inBothModes(
  "mistakes exit non-zero with a message on stderr and nothing on stdout",
  async (_s, kv) => {
    const team = await ok(kv, "team:create", "--name", "Acme");
    const user = await ok(kv, "user:create", "--team", team.id, "--name", "Ada");
    const missingId = "01900000-0000-7000-8000-000000000000";
    const cases: [string[], RegExp][] = [
      [["nope"], /Unknown command "nope"/],
      [[], /No command given/],
      [["team:create"], /--name is required/],
      [["user:create"], /--team and --name are required/],
      [["user:create", "--role", "admin"], /--team and --name are required/],
      [["incoming:create", "--name", "x"], /--channel and --bot are required/],
      [["team:create", "--name"], /--name needs a value/],
      [["team:create", "--nmae", "Acme"], /Unknown flag --nmae\. Did you mean --name\?/],
      [["team:create", "--name", "Acme", "--verbose"], /Unknown flag --verbose\./],
      [["tokens:create"], /Unknown command "tokens:create"\. Did you mean token:create\?/],
      [["team:create", "--name", "a", "--name", "b"], /given twice/],
      [["team:create", "Acme"], /Argument 1 after the command is not a flag/],
      [["user:create", "--team", "acme", "--name", "Ada"], /--team must be a uuid/],
      [["user:create", "--team", team.id, "--name", "Ada", "--role", "king"], /--role must be one/],
      [["user:create", "--team", missingId, "--name", "Ada"], /No team/],
      [
        ["token:create", "--user", user.id, "--scopes", "channels:read,root"],
        /"root" is not a scope/,
      ],
      [
        ["token:create", "--user", user.id, "--scopes", "channel:read"],
        /"channel:read" is not a scope\. Did you mean channels:read\?/,
      ],
      [["webhook:create"], /POST \/api\/v1\/webhooks.*settings screen/],
      [["channel:create"], /POST \/api\/v1\/channels.*member:add/],
      [["token:create", "--user", user.id, "--scopes", ","], /--scopes needs at least one/],
      [["token:create", "--user", missingId, "--scopes", "all"], /No user/],
      [["token:create", "--user", user.id, "--scopes", "all", "--expires-in", "0"], /seconds/],
      [["token:create", "--user", user.id, "--scopes", "all", "--expires-in", "2w"], /90m, 12h/],
      [["token:revoke", "--id", missingId], /No such token/],
      [["token:rotate", "--id", missingId], /No such token/],
      [["emoji:create", "--team", team.id, "--name", "Ship It"], /emoji name/],
      [["dm:create", "--users", user.id], /at least two different users/],
      [["dm:create", "--users", `${user.id},${user.id}`], /at least two different users/],
      [["member:add", "--channel", missingId, "--user", user.id], /No channel/],
      [["audit:list", "--team", team.id, "--limit", "ten"], /--limit must be a whole number/],
      [["audit:list", "--team", missingId], /No team/],
    ];
    for (const [args, message] of cases) {
      const r = await admin(kv, ...args);
      const what = `admin ${args.join(" ")}`;
      assert.notEqual(r.code, 0, `${what} should fail`);
      assert.match(r.stderr, message, what);
      assert.equal(r.stdout, "", `${what} printed on stdout`);
    }
    const day = await ok(
      kv,
      "token:create",
      "--user",
      user.id,
      "--scopes",
      "all",
      "--expires-in",
      "1d",
    );
    const left = Date.parse(day.expires_at) - Date.now();
    assert.ok(left > 86_000_000 && left <= 86_400_000, `--expires-in 1d: ${day.expires_at}`);
    const revokedTwice = await ok(kv, "token:create", "--user", user.id, "--scopes", "all");
    await ok(kv, "token:revoke", "--id", revokedTwice.id);
    const again = await admin(kv, "token:revoke", "--id", revokedTwice.id);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /already revoked/);
  },
);

inBothModes("demo prints a workspace whose tokens work", async (s, kv) => {
  const demo = await ok(kv, "demo");
  assert.match(demo.admin.token, /^tcp_/);
  assert.match(demo.bot.token, /^tcb_/);
  assert.ok(demo.try.includes(`Bearer ${demo.admin.token}`));
  const names = (r: { body: { data: { name: string }[] } }) => r.body.data.map((c) => c.name);
  const asAdmin = await api(s, "GET", "/channels", { token: demo.admin.token });
  assert.equal(asAdmin.status, 200);
  assert.deepEqual(names(asAdmin), ["demo", "general"]);
  const asBot = await api(s, "GET", "/channels", { token: demo.bot.token });
  assert.deepEqual(names(asBot), ["demo"]);
  const demoChannel = demo.channels.find((c: { name: string }) => c.name === "demo");
  const members = await api(s, "GET", `/channels/${demoChannel.id}/members`, {
    token: demo.bot.token,
  });
  assert.deepEqual(
    members.body.data.map((m: { id: string }) => m.id).sort(),
    [
      demo.admin.id,
      demo.bot.id,
    ].sort(),
  );
});

inBothModes(
  "a second demo says so instead of making another team; --format shell sets the README's names",
  async (s, kv) => {
    const first = await ok(kv, "demo");
    const again = await admin(kv, "demo");
    assert.equal(again.code, 1);
    assert.equal(again.stdout, "");
    assert.match(
      again.stderr,
      new RegExp(`A team named "Demo" exists already \\(${first.team.id}\\)`),
    );
    assert.match(again.stderr, new RegExp(`token:create --user ${first.admin.id}`));
    assert.equal((await ok(kv, "team:list")).length, 1, "no second team");

    const shell = await admin(kv, "demo", "--name", "Second", "--format", "shell");
    assert.equal(shell.code, 0, shell.stderr);
    const names = [...shell.stdout.matchAll(/^export ([A-Z_]+)=/gm)].map((m) => m[1]);
    assert.deepEqual(names, ["BASE", "TEAM", "ADA", "TOKEN", "BOT", "BOT_TOKEN", "CHANNEL"]);
    // As the README uses them: eval'd, then $TOKEN and $CHANNEL in the next command.
    const script =
      `eval "$1"; curl -s "$2/api/v1/channels/$CHANNEL" -H "Authorization: Bearer $TOKEN"`;
    const out = await new Deno.Command("bash", {
      args: ["-c", script, "demo", shell.stdout, s.url],
      stdout: "piped",
    }).output();
    const channel = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.equal(channel.data.name, "demo");
  },
);

inBothModes("lost ids can be found again: teams, users, tokens, subscriptions", async (s, kv) => {
  const demo = await ok(kv, "demo");
  const teams = await ok(kv, "team:list");
  assert.deepEqual(teams.map((t: { id: string }) => t.id), [demo.team.id]);
  const users = await ok(kv, "user:list", "--team", demo.team.id);
  assert.deepEqual(
    users.map((u: { name: string; type: string }) => [u.name, u.type]),
    [["Integrations", "bot"], ["Ada Admin", "human"], ["Demo Bot", "bot"]],
  );
  const tokens = await ok(kv, "token:list", "--user", demo.bot.id);
  assert.deepEqual(tokens.map((t: { id: string }) => t.id), [demo.bot.token_id]);
  assert.ok(!JSON.stringify(tokens).includes(demo.bot.token), "never the value");
  assert.equal(tokens[0].kind, "bot");
  const rotated = await ok(kv, "token:rotate", "--id", demo.bot.token_id);
  const after = await ok(kv, "token:list", "--user", demo.bot.id);
  assert.deepEqual(
    after.map((t: { id: string; revoked_at: string | null }) => [t.id, !!t.revoked_at]),
    [
      [demo.bot.token_id, true],
      [rotated.id, false],
    ],
  );
  s.ctx.settings.webhooks.allowPrivateUrls = true;
  const sub = await api(s, "POST", "/webhooks", {
    token: demo.admin.token,
    body: { name: "hook", url: "http://127.0.0.1:9/hook", events: ["message.created"] },
  });
  const hooks = await ok(kv, "webhook:list", "--team", demo.team.id);
  assert.deepEqual(hooks.map((h: { id: string }) => h.id), [sub.body.data.id]);
  assert.ok(!JSON.stringify(hooks).includes("whsec_"), "never the secret");
});

inBothModes(
  "login-link prints a one-time link into the settings screen; bots get none",
  async (s, kv) => {
    const demo = await ok(kv, "demo");
    const { url } = await ok(kv, "login-link", "--user", demo.admin.id);
    const path = new URL(url).pathname;
    assert.match(path, /^\/settings\/login\/[0-9A-Za-z]{40}$/);
    const opened = await fetch(`${s.url}${path}`);
    assert.equal(opened.status, 200);
    assert.match(await opened.text(), /Sign in as Ada Admin/, "opening the link uses nothing");
    const use = () =>
      fetch(`${s.url}${path}`, { method: "POST", redirect: "manual", headers: { Origin: s.url } });
    const first = await use();
    await first.body?.cancel();
    assert.equal(first.status, 303);
    assert.equal(first.headers.get("location"), "/settings/integrations");
    const second = await use();
    await second.body?.cancel();
    assert.equal(second.status, 410, "a link works once");
    const bot = await admin(kv, "login-link", "--user", demo.bot.id);
    assert.equal(bot.code, 1);
    assert.match(bot.stderr, /Bots can't sign in/);
    assert.equal(bot.stdout, "");
  },
);

/** `deno task admin <args>` with no store at all, as help needs none: its exit code and stdout. */
async function help(...args: string[]) {
  return await helpWith({}, ...args);
}

async function helpWith(env: Record<string, string>, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "admin", ...args],
    cwd: root,
    env: { KV_PATH: "", APP_KEY: "", BASE_URL: "", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, text: new TextDecoder().decode(out.stdout) };
}

Deno.test("cli: help shows the settings in effect, never APP_KEY's value", async () => {
  const unset = (await help("help")).text;
  assert.match(unset, /now \.\/data\/kv\.sqlite3 \(the default: KV_PATH is not set\)/);
  const key = "c2VjcmV0LWtleS12YWx1ZS10aGF0LW11c3Qtbm90LXNob3c=";
  const set = (await helpWith(
    { KV_PATH: "/app/data/kv.sqlite3", APP_KEY: key, BASE_URL: "https://chat.example" },
    "help",
    "member:add",
  )).text;
  assert.match(set, /now \/app\/data\/kv\.sqlite3\n/);
  assert.match(set, /now set \(APP_KEY\)/);
  assert.match(set, /now https:\/\/chat\.example/);
  assert.ok(!set.includes(key), "APP_KEY's value shown");
});

Deno.test("cli: help lists every command on stdout", async () => {
  const { code, text } = await help("--help");
  assert.equal(code, 0);
  for (const name of ["team:create", "token:rotate", "member:add", "audit:list", "demo"]) {
    assert.ok(text.includes(name), name);
  }
  // Each command with what it does, and the settings the CLI reads.
  assert.match(text, /channel:list +A team's channels, direct messages included, by name\./);
  assert.match(text, /token:create +Makes a token/);
  for (const setting of ["KV_PATH", "APP_KEY", "BASE_URL"]) assert.match(text, new RegExp(setting));
  assert.match(text, /an array for lists/);
  const one = await help("help", "token:create");
  assert.equal(one.code, 0);
  const about = one.text;
  assert.match(about, /^token:create: Makes a token/);
  assert.match(about, /--scopes <a,b,\.\.\.\|all>/);
  // After a command, --help and -h ask for that command's help, as other CLIs take them.
  for (const flag of ["--help", "-h"]) {
    const asked = await help("token:create", flag);
    assert.deepEqual(asked, one, flag);
  }
});

Deno.test("cli: docs/cli.md names every command the CLI has", async () => {
  const listed = (await help("help")).text.split("Commands:\n")[1].split("\n\n")[0];
  const names = [...listed.matchAll(/^ {2}(\S+) /gm)].map((m) => m[1]);
  assert.ok(names.length > 25, `${names.length} commands`);
  const readme = await Deno.readTextFile(`${root}docs/cli.md`);
  const named = (n: string) =>
    [`admin ${n}`, `\`${n} `, `\`${n}\``].some((t) => readme.includes(t));
  assert.deepEqual(names.filter((n) => !named(n)), [], "commands docs/cli.md leaves out");
});

inBothModes("channel:list shows a team's channels, direct messages included", async (_s, kv) => {
  const demo = await ok(kv, "demo");
  const person = await ok(kv, "user:create", "--team", demo.team.id, "--name", "Bo");
  const dm = await ok(kv, "dm:create", "--users", `${demo.admin.id},${person.id}`);
  const channels = await ok(kv, "channel:list", "--team", demo.team.id);
  assert.deepEqual(
    channels.map((c: { id: string; is_direct: boolean }) => [c.id, c.is_direct]).sort(),
    [...demo.channels.map((c: { id: string }) => [c.id, false]), [dm.id, true]].sort(),
  );
  assert.deepEqual(Object.keys(channels[0]).sort(), [
    "id",
    "is_archived",
    "is_direct",
    "name",
    "visibility",
  ]);
});

/** Runs the CLI with exactly `env` (and nothing of this process's), without a server of ours. */
async function bareAdmin(env: Record<string, string>, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "admin", ...args],
    cwd: root,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: Deno.env.get("HOME") ?? "",
      NO_COLOR: "1",
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

const listing = async (dir: string) =>
  (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();

Deno.test("cli: pointed at a store no service made, it says so naming KV_PATH and writes nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cli_missing_" });
  try {
    for (const kvPath of [`${dir}/kv.sqlite3`, `${dir}/typo/kv.sqlite3`]) {
      const r = await bareAdmin({ KV_PATH: kvPath }, "team:create", "--name", "Acme");
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stdout, "");
      assert.match(r.stderr, /^KV_PATH: there is no store at /);
      assert.equal(r.stderr.trim().split("\n").length, 1, "one line");
    }
    assert.deepEqual(await listing(dir), [], "no store, no folder, no app.key");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli: without the service's key, or with another, it refuses naming APP_KEY and writes no key", async () => {
  const store = await sharedStore();
  const service = await startService(store.env);
  try {
    const folder = store.env.KV_PATH.replace(/[^/]*$/, "");
    const before = await listing(folder);
    const env = { KV_PATH: store.env.KV_PATH };
    const keyless = await bareAdmin(env, "team:create", "--name", "Acme");
    assert.equal(keyless.code, 1);
    assert.match(keyless.stderr, /^APP_KEY: not set, and there is no .*app\.key/);
    const wrong = await bareAdmin(
      { ...env, APP_KEY: crypto.getRandomValues(new Uint8Array(32)).toBase64() },
      "team:create",
      "--name",
      "Acme",
    );
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /^APP_KEY: not the key the store/);
    assert.deepEqual(await listing(folder), before, "no app.key, nothing else either");
    const right = await bareAdmin(
      { ...env, APP_KEY: store.env.APP_KEY },
      "team:create",
      "--name",
      "Acme",
    );
    assert.equal(right.code, 0, right.stderr);
  } finally {
    await service.kill();
    await store.cleanup();
  }
});

Deno.test("cli: the URLs it prints use the BASE_URL the service last started with", async () => {
  const store = await sharedStore();
  const service = await startService(store.env);
  try {
    const env = { KV_PATH: store.env.KV_PATH, APP_KEY: store.env.APP_KEY };
    const demo = JSON.parse((await bareAdmin(env, "demo")).stdout);
    const port = new URL(service.url).port;
    const link = JSON.parse((await bareAdmin(env, "login-link", "--user", demo.admin.id)).stdout);
    assert.ok(link.url.startsWith(`http://localhost:${port}/settings/login/`), link.url);
    const own = await bareAdmin(
      { ...env, BASE_URL: "https://chat.example.com" },
      "login-link",
      "--user",
      demo.admin.id,
    );
    assert.ok(JSON.parse(own.stdout).url.startsWith("https://chat.example.com/"), "its own wins");
  } finally {
    await service.kill();
    await store.cleanup();
  }
});

inBothModes("audit:list names who acted and on what, beside the ids", async (s, kv) => {
  const demo = await ok(kv, "demo");
  const entries = await ok(kv, "audit:list", "--team", demo.team.id);
  const bots = entries.find((e: { target_name: string }) =>
    e.target_name === "Demo Bot's token “demo”"
  );
  assert.ok(bots, JSON.stringify(entries));
  assert.equal(bots.action, "token.created");
  assert.equal(bots.actor_name, "operator (CLI)");
  assert.equal(bots.actor_id, null);
  assert.match(bots.target_id, /^[0-9a-f-]{36}$/);
  const sub = await api(s, "POST", "/webhooks", {
    token: demo.admin.token,
    body: {
      name: "Pager bridge",
      url: "https://93.184.216.34/hook",
      events: ["message.created"],
    },
  });
  assert.equal(sub.status, 201);
  const [latest] = await ok(kv, "audit:list", "--team", demo.team.id, "--limit", "1");
  assert.deepEqual(
    [latest.action, latest.actor_name, latest.actor_id, latest.target_name, latest.target_id],
    ["webhook.created", "Ada Admin", demo.admin.id, "Pager bridge", sub.body.data.id],
  );
});
