import assert from "node:assert/strict";
import { loadSettings, SettingsError } from "../core/settings.ts";
import { freePort } from "./processes.ts";

const ROOT = new URL("..", import.meta.url).pathname;

function refusal(env: Record<string, string>): string {
  try {
    loadSettings(env);
  } catch (e) {
    assert.ok(e instanceof SettingsError, `expected a SettingsError, got ${e}`);
    return e.message;
  }
  assert.fail(`${JSON.stringify(env)} was accepted`);
}

Deno.test("settings: defaults follow the decisions table", () => {
  const s = loadSettings({});
  assert.equal(s.port, 8080);
  assert.equal(s.kvPath, "./data/kv.sqlite3");
  assert.equal(s.baseUrl, "http://localhost:8080");
  assert.equal(s.appKey, undefined);
  assert.equal(s.integrationsEnabled, true);
  assert.equal(s.rateLimit, 60);
  assert.deepEqual(s.webhooks, {
    disableAfter: 20,
    maxAttempts: 8,
    backoffMs: [10_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000],
    timeoutMs: 10_000,
    allowPrivateUrls: false,
    window: 1000,
  });
});

Deno.test("settings: the service listens on loopback unless HOST says otherwise", () => {
  assert.equal(loadSettings({}).host, "127.0.0.1");
  assert.equal(loadSettings({ HOST: "0.0.0.0" }).host, "0.0.0.0");
  assert.equal(loadSettings({ HOST: "" }).host, "127.0.0.1", "empty is unset");
  assert.equal(loadSettings({}).trustProxy, false);
  assert.equal(loadSettings({ TRUST_PROXY: "true" }).trustProxy, true);
  assert.equal(loadSettings({ DELIVERY_TIMERS: "false" }).deliveryTimers, false);
  assert.equal(loadSettings({}).deliveryTimers, true, "timers, off Deno Deploy");
  const dockerfile = Deno.readTextFileSync(new URL("../Dockerfile", import.meta.url));
  assert.match(dockerfile, /^ENV .*\bHOST=0\.0\.0\.0\b/m, "the image listens on every interface");
});

Deno.test("settings: every variable is read, empty ones fall back to the default", () => {
  const appKey = crypto.getRandomValues(new Uint8Array(32)).toBase64();
  const s = loadSettings({
    PORT: "9000",
    KV_PATH: ":memory:",
    BASE_URL: "https://chat.example.com/",
    APP_KEY: appKey,
    INTEGRATIONS_ENABLED: "false",
    INTEGRATIONS_API_RATE_LIMIT: "5",
    WEBHOOKS_DISABLE_AFTER: "3",
    WEBHOOKS_MAX_ATTEMPTS: "2",
    WEBHOOKS_BACKOFF: "500ms, 2s,1h",
    WEBHOOKS_TIMEOUT: "1.5",
    WEBHOOKS_ALLOW_PRIVATE_URLS: "true",
    WEBHOOKS_MAX_IN_MEMORY: "50",
    UNRELATED: "ignored",
  });
  assert.equal(s.port, 9000);
  assert.equal(s.kvPath, ":memory:");
  assert.equal(s.baseUrl, "https://chat.example.com");
  assert.equal(s.appKey, appKey);
  assert.equal(s.integrationsEnabled, false);
  assert.equal(s.rateLimit, 5);
  assert.deepEqual(s.webhooks, {
    disableAfter: 3,
    maxAttempts: 2,
    backoffMs: [500, 2_000, 3_600_000],
    timeoutMs: 1_500,
    allowPrivateUrls: true,
    window: 50,
  });
  assert.equal(loadSettings({ PORT: "", INTEGRATIONS_ENABLED: "" }).port, 8080);
  assert.equal(loadSettings({ PORT: "9000" }).baseUrl, "http://localhost:9000");
});

Deno.test("settings: a bad value is refused with the variable's name", () => {
  const bad: [string, string][] = [
    ["PORT", "abc"],
    ["PORT", "70000"],
    ["PORT", "80.5"],
    ["BASE_URL", "not a url"],
    ["BASE_URL", "ftp://chat.example.com"],
    ["APP_KEY", "too-short"],
    ["APP_KEY", crypto.getRandomValues(new Uint8Array(16)).toBase64()],
    ["INTEGRATIONS_ENABLED", "maybe"],
    ["INTEGRATIONS_API_RATE_LIMIT", "0"],
    ["INTEGRATIONS_API_RATE_LIMIT", "-5"],
    ["INTEGRATIONS_API_RATE_LIMIT", "lots"],
    ["WEBHOOKS_DISABLE_AFTER", "0"],
    ["WEBHOOKS_MAX_ATTEMPTS", "2.5"],
    ["WEBHOOKS_BACKOFF", "10x"],
    ["WEBHOOKS_BACKOFF", "10s,,1m"],
    ["WEBHOOKS_BACKOFF", "soon"],
    ["WEBHOOKS_TIMEOUT", "0"],
    ["WEBHOOKS_TIMEOUT", "ten"],
    ["WEBHOOKS_ALLOW_PRIVATE_URLS", "yes"],
  ];
  for (const [name, value] of bad) {
    assert.match(refusal({ [name]: value }), new RegExp(`\\b${name}\\b`), `${name}=${value}`);
  }
  const remote = { KV_PATH: "https://kv.example.com/db" };
  assert.match(refusal(remote), /APP_KEY/, "no data folder to keep a generated key in");
  const appKey = crypto.getRandomValues(new Uint8Array(32)).toBase64();
  assert.equal(loadSettings({ ...remote, APP_KEY: appKey }).kvPath, remote.KV_PATH);
  const both = refusal({ PORT: "x", WEBHOOKS_TIMEOUT: "-1" });
  assert.match(both, /PORT/);
  assert.match(both, /WEBHOOKS_TIMEOUT/);
});

Deno.test("settings: a number that isn't one is told what it must be, not how zod read it", () => {
  assert.match(refusal({ PORT: "abc" }), /PORT: must be a port number from 0 to 65535/);
  assert.match(refusal({ PORT: "80.5" }), /PORT: must be a port number from 0 to 65535/);
  assert.match(
    refusal({ INTEGRATIONS_API_RATE_LIMIT: "lots" }),
    /INTEGRATIONS_API_RATE_LIMIT: must be a whole number above 0/,
  );
  assert.match(
    refusal({ WEBHOOKS_TIMEOUT: "ten" }),
    /WEBHOOKS_TIMEOUT: must be a number of seconds/,
  );
  for (const value of ["abc", "lots", "ten"]) {
    const text = refusal({
      PORT: value,
      INTEGRATIONS_API_RATE_LIMIT: value,
      WEBHOOKS_TIMEOUT: value,
    });
    assert.doesNotMatch(text, /NaN|expected number/);
  }
});

function denoArgs(script: string): string[] {
  return ["run", "-A", "--config", `${ROOT}deno.json`, script];
}

/** The environment a child needs to find its Deno cache, and nothing of ours. */
function baseEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME", "TMPDIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

Deno.test("settings: main.ts refuses to start on a bad value and names it", async () => {
  const cwd = await Deno.makeTempDir();
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: denoArgs(`${ROOT}main.ts`),
      cwd,
      clearEnv: true,
      env: { ...baseEnv(), PORT: "abc" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.notEqual(out.code, 0);
    assert.match(new TextDecoder().decode(out.stderr), /PORT/);
    const left = [...Deno.readDirSync(cwd)];
    assert.deepEqual(left, [], "nothing is created before the settings are valid");
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

/** Reads lines from a stream until one matches, or the timeout passes. */
async function waitForLine(
  stream: ReadableStream<string>,
  match: RegExp,
  timeoutMs: number,
): Promise<string> {
  const reader = stream.getReader();
  let seen = "";
  const timer = setTimeout(() => reader.cancel(), timeoutMs);
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`no line matching ${match} in:\n${seen}`);
      seen += value;
      const line = seen.split("\n").find((l) => match.test(l));
      if (line) return line;
    }
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
  }
}

/**
 * Runs main.ts in `cwd` as it is, with no HOST (so on loopback, its default), until its start
 * line is printed.
 */
async function startMain(cwd: string, port: number) {
  const child = new Deno.Command(Deno.execPath(), {
    args: denoArgs(`${ROOT}main.ts`),
    cwd,
    clearEnv: true,
    env: { ...baseEnv(), PORT: String(port) },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  // Cancelled at stop: that closes the child's stdout, which the pipe holds.
  const stdout = child.stdout.pipeThrough(new TextDecoderStream());
  try {
    const line = await waitForLine(stdout, /Listening/, 20_000);
    return {
      line,
      async stop() {
        child.kill("SIGTERM");
        await child.status;
        await stdout.cancel().catch(() => {});
        await stderr;
      },
    };
  } catch (e) {
    child.kill("SIGKILL");
    await child.status;
    throw new Error(`${(e as Error).message}\nstderr:\n${await stderr}`);
  }
}

Deno.test("settings: main.ts prints where it listens, creates its KV and APP_KEY", async () => {
  const cwd = await Deno.makeTempDir();
  try {
    const port = freePort();
    const first = await startMain(cwd, port);
    let key: string;
    try {
      assert.ok(first.line.includes(`http://localhost:${port}`), first.line);
      assert.ok(first.line.includes(`Listening on 127.0.0.1:${port}`), "names where it listens");
      assert.ok(first.line.includes("./data/kv.sqlite3"), first.line);
      const up = await fetch(`http://127.0.0.1:${port}/up`);
      assert.equal(up.status, 200);
      assert.equal((await up.json()).status, "ok");
      assert.ok((await Deno.stat(`${cwd}/data/kv.sqlite3`)).isFile);
      const keyFile = await Deno.stat(`${cwd}/data/app.key`);
      assert.equal(keyFile.mode! & 0o777, 0o600);
      key = (await Deno.readTextFile(`${cwd}/data/app.key`)).trim();
      assert.equal(Uint8Array.fromBase64(key).length, 32);
    } finally {
      await first.stop();
    }
    const second = await startMain(cwd, port);
    await second.stop();
    assert.equal((await Deno.readTextFile(`${cwd}/data/app.key`)).trim(), key, "key is kept");
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("settings: APP_KEY_FILE reads the key from a secret file, and says what is wrong", async () => {
  const dir = await Deno.makeTempDir({ prefix: "secret-" });
  try {
    const key = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
    await Deno.writeTextFile(`${dir}/app_key`, `${key}\n`);
    assert.equal(loadSettings({ APP_KEY_FILE: `${dir}/app_key` }).appKey, key);
    assert.match(
      refusal({ APP_KEY_FILE: `${dir}/app_key`, APP_KEY: key }),
      /APP_KEY_FILE: set APP_KEY or APP_KEY_FILE, not both/,
    );
    assert.match(
      refusal({ APP_KEY_FILE: `${dir}/nope` }),
      /APP_KEY_FILE: can't read .*no such file/,
    );
    await Deno.writeTextFile(`${dir}/short`, "c2hvcnQ=");
    assert.match(
      refusal({ APP_KEY_FILE: `${dir}/short` }),
      /APP_KEY_FILE \(.*short\): must be base64 of exactly 32 bytes/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("settings: in a container without BASE_URL, the start says its links name the container", async () => {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--lock=tests/deno.lock", "main.ts"],
    cwd: ROOT,
    env: { PORT: String(port), KV_PATH: ":memory:", SERVICE_IN_CONTAINER: "true", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  const out = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const both = async (r: ReadableStreamDefaultReader<string>) => {
    for (let c = await r.read(); !c.done; c = await r.read()) lines.push(...c.value.split("\n"));
  };
  const reading = Promise.all([both(reader), both(out)]);
  for (let i = 0; i < 400 && !lines.some((l) => l.includes("Listening on")); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGTERM");
  await child.status;
  await reading;
  const warned = lines.filter((l) => l.includes("BASE_URL: not set"));
  assert.equal(warned.length, 1, lines.join("\n"));
  assert.match(warned[0], /http:\/\/localhost:\d+, the container's own address/);
});

Deno.test({
  name: "settings: deno task dev restarts on a change, and stops on SIGTERM, its watcher too",
  // The task runs with the repository's own lock, which Deno 2.5 would write @types/node into.
  ignore: !Deno.version.deno.startsWith("2.9."),
  fn: devStopsOnSigterm,
});

async function devStopsOnSigterm() {
  const dir = await Deno.makeTempDir({ prefix: "dev-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "dev"],
    cwd: ROOT,
    env: { KV_PATH: `${dir}/kv.sqlite3`, PORT: String(freePort()), NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const reading = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) text += chunk;
  })();
  const out = (async () => {
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) text += chunk;
  })();
  try {
    const listened = () => text.split("Listening on").length - 1;
    const until = async (n: number) => {
      for (let i = 0; i < 400 && listened() < n; i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(listened(), n, text);
    };
    await until(1);
    // A source file changed (its time only: other runs may be reading the sources).
    const now = new Date();
    await Deno.utime(`${ROOT}/core/version.ts`, now, now);
    await until(2);
    assert.match(text, /restarting/);
    child.kill("SIGTERM");
    const ended = await Promise.race([
      child.status.then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), 10_000)),
    ]);
    assert.ok(ended, `deno task dev still runs after SIGTERM:\n${text}`);
    await Promise.all([reading, out]);
    assert.match(text, /stopped/);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* ended */ }
    await Deno.remove(dir, { recursive: true });
  }
}
