/**
 * The Docker image, built and run with Podman: docs/deploy.md's container commands as written (a
 * `docker` that is podman, PORT set to a free port), in order, on a fresh copy of the repository,
 * and between them what the page promises: the service and tini run as uid 1993, the store's
 * folder 0700 and files 0600, the health check healthy and failing (not hanging) on a frozen
 * service, the admin CLI, a post, links naming BASE_URL, a stop under load, a backup and restore by
 * the page's recipe, a new container on the same volume keeping everything, one-line refusals (and
 * the page's wait ending on a container that exits at start, showing its log), and a start with no
 * network and no cached package metadata.
 * Where containers can't run here, it says why and skips.
 */
import assert from "node:assert/strict";
import { type ContainerEngine, containerEngine } from "./container_engine.ts";
import { shellBlocks } from "./walkthrough_plan.ts";
import { freePort } from "./processes.ts";

const root = new URL("..", import.meta.url).pathname;

/** Once per CI run: the image's Deno is its own, whatever Deno runs the suite. */
const onSuiteDeno = Deno.version.deno.startsWith("2.9.");
const engine = onSuiteDeno ? await containerEngine() : {
  why: `the image is tested once, in the suite's Deno 2.9 run (this is ${Deno.version.deno})`,
};
if ("why" in engine) console.log(`container tests skipped: ${engine.why}`);

/** The docs' `docker`, as a bash function: podman, building on the stand-in where there is one. */
const dockerIsPodman = (e: ContainerEngine) =>
  String.raw`docker() {
  if [ "$1" = build ]; then shift; podman build --quiet --format docker ${
    e.baseImage ? `--build-arg DENO_IMAGE=${e.baseImage} ` : ""
  }"$@"; else podman "$@"; fi
}`;

interface Shell {
  /** Runs a script (after the docker function) in the copy; its exit code and output. */
  run(script: string): Promise<{ code: number; out: string }>;
  dir: string;
  env: Record<string, string>;
}

async function shellIn(e: ContainerEngine, port: number): Promise<Shell> {
  const dir = await Deno.makeTempDir({ prefix: "container-docs-" });
  const copy = new Deno.Command("sh", {
    args: [
      "-c",
      `tar -C '${root}' --exclude=./.git --exclude=./data --exclude=./backups -cf - . | tar -xf -`,
    ],
    cwd: dir,
  });
  assert.equal((await copy.output()).code, 0);
  const env = { ...e.env, PORT: String(port), NO_COLOR: "1" };
  const state = `${dir}/.shell-state`;
  await Deno.writeTextFile(state, "");
  return {
    dir,
    env,
    async run(script) {
      // Each block sees the variables the blocks before it set, as in one terminal.
      const full = `${dockerIsPodman(e)}\nset -ea\n. '${state}'\n${script}\n` +
        `export -p | grep -vE '^declare -x (PWD|OLDPWD|SHLVL)=' > '${state}'`;
      const out = await new Deno.Command("bash", { args: ["-c", full], cwd: dir, env }).output();
      const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      return { code: out.code, out: text };
    },
  };
}

/** docs/deploy.md's shell blocks that use docker, in the page's order. */
async function containerBlocks(): Promise<string[]> {
  const text = await Deno.readTextFile(`${root}/docs/deploy.md`);
  return shellBlocks(text).filter((b) => /\bdocker /.test(b));
}

/**
 * Lines of output, without podman's complaints that there is no systemd to time health checks
 * with (a sandbox's; a host with systemd runs them).
 */
const lines = (text: string) =>
  text.trim().split("\n").filter((l) => l.trim() !== "" && !/^time=".*systemd/.test(l));

Deno.test({
  name: "container: docs/deploy.md's commands build and run the image, as the page says",
  ignore: "why" in engine,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const e = engine as ContainerEngine;
    const port = freePort();
    const base = `http://localhost:${port}`;
    const shell = await shellIn(e, port);
    const [start, demo, backup, restore, upgrade, ...rest] = await containerBlocks();
    assert.equal(rest.length, 0, "the page's container blocks are the five this test knows");
    const block = async (text: string) => {
      const r = await shell.run(text);
      assert.equal(r.code, 0, `${text}\n---\n${r.out}`);
      return r.out;
    };
    const podman = async (...args: string[]) => {
      const r = await e.podman(...args);
      assert.equal(r.code, 0, `podman ${args.join(" ")}\n${r.out}`);
      return r.out;
    };
    let hello = "";
    // The first post, read back after the restore and the upgrade.
    const helloStill = async () => {
      const read = await block(
        `curl -s "$BASE/api/v1/channels/$CHANNEL/messages/${hello}" -H "Authorization: Bearer $TOKEN"`,
      );
      assert.equal(JSON.parse(read).data?.body, "Hello from the container", read);
    };
    try {
      await t.step("starts, answers /up, runs as deno with private files", async () => {
        assert.match(await block(start), /"status":\s*"ok"/);
        const users = lines(await podman("top", "chat", "user", "args")).slice(1);
        assert.ok(users.length >= 2, users.join("\n"));
        for (const row of users) assert.match(row, /^deno\s/, row);
        const modes = await podman(
          "exec",
          "chat",
          "stat",
          "-c",
          "%a %u %n",
          "/app/data",
          "/app/data/kv.sqlite3",
          "/app/data/app.key",
        );
        assert.deepEqual(lines(modes), [
          "700 1993 /app/data",
          "600 1993 /app/data/kv.sqlite3",
          "600 1993 /app/data/app.key",
        ]);
        const log = await podman("logs", "chat");
        assert.match(log, /APP_KEY/, "the generated key is said");
        assert.doesNotMatch(log, /BASE_URL: not set/);
        assert.equal((await e.podman("healthcheck", "run", "chat")).code, 0);
        const ls = await podman("exec", "chat", "ls", "/app");
        for (const kept of ["docs", "examples", "tests", "bench", "README.md"]) {
          assert.ok(!lines(ls).includes(kept), `${kept} is in the image`);
        }
      });

      await t.step("the admin CLI makes the demo, its bot posts, links name BASE_URL", async () => {
        const out = await block(`${demo}\necho; echo "ADA=$ADA"`);
        const posted = JSON.parse(out.split("\n")[0]).data;
        assert.equal(posted.body, "Hello from the container");
        hello = posted.id;
        const ada = out.match(/^ADA=(\S+)$/m)?.[1];
        assert.ok(ada, out);
        const link = await podman(
          "exec",
          "chat",
          "admin",
          "login-link",
          "--user",
          ada,
        );
        assert.ok(JSON.parse(link).url.startsWith(`${base}/settings/login/`), link);
      });

      await t.step("the health check fails on a frozen service, and doesn't hang", async () => {
        const service = await servicePid(e);
        Deno.kill(service, "SIGSTOP");
        const began = performance.now();
        const probe = await e.podman("healthcheck", "run", "chat");
        const took = performance.now() - began;
        Deno.kill(service, "SIGCONT");
        assert.notEqual(probe.code, 0, probe.out);
        assert.ok(took < 8_000, `the probe took ${took} ms`);
      });

      await t.step("a stop under load ends cleanly; the volume keeps what was posted", async () => {
        const load = shell.run(
          `for i in $(seq 1 200); do curl -s -o /dev/null -X POST "$BASE/api/v1/channels/$CHANNEL/messages" ` +
            `-H "Authorization: Bearer $BOT_TOKEN" -H "Content-Type: application/json" -d '{"body": "load"}' || true; done`,
        );
        await new Promise((r) => setTimeout(r, 500));
        const began = performance.now();
        await podman("stop", "--time", "30", "chat");
        const took = performance.now() - began;
        await load;
        assert.equal(
          (await podman("inspect", "--format", "{{.State.ExitCode}}", "chat")).trim(),
          "0",
        );
        assert.ok(took < 10_000, `stopping took ${took} ms`);
        assert.match(await podman("logs", "chat"), /stopped/);
        await podman("start", "chat");
        await block(`until curl -sf "$BASE/up" >/dev/null; do sleep 0.2; done`);
      });

      await t.step("a backup and a restore by the page's recipe", async () => {
        await block(backup);
        const files = lines((await shell.run("ls backups")).out);
        assert.equal(
          files.filter((f) => /^kv-\d{8}-\d{6}\.sqlite3$/.test(f)).length,
          1,
          files.join(),
        );
        assert.ok(files.includes("app.key"));
        await block(
          `curl -s -X POST "$BASE/api/v1/channels/$CHANNEL/messages" ` +
            `-H "Authorization: Bearer $BOT_TOKEN" -H "Content-Type: application/json" -d '{"body": "after the backup"}'`,
        );
        const out = await block(
          `${restore}\nuntil curl -sf "$BASE/up" >/dev/null; do sleep 0.2; done`,
        );
        assert.match(out, /"restored_from"/);
        await helloStill();
        const history = await block(
          `curl -s "$BASE/api/v1/channels/$CHANNEL/messages?limit=5" -H "Authorization: Bearer $TOKEN"`,
        );
        assert.doesNotMatch(
          history,
          /after the backup/,
          "the restore brought back the backup's store",
        );
        assert.doesNotMatch(
          await podman("exec", "chat", "ls", "/app/data"),
          /restore\.sqlite3|backup\.sqlite3/,
        );
      });

      await t.step("an upgrade: a new container on the same volume keeps everything", async () => {
        await block(`${upgrade}\nuntil curl -sf "$BASE/up" >/dev/null; do sleep 0.2; done`);
        await helloStill();
      });

      await t.step(
        "refusals are one line: no BASE_URL, an unwritable mount, a missing backup folder",
        async () => {
          const bare = await e.podman(
            "run",
            "-d",
            "--name",
            "bare",
            "-e",
            "KV_PATH=:memory:",
            "chat-integrations",
          );
          assert.equal(bare.code, 0, bare.out);
          await waitForLog(e, "bare", /Listening on/);
          const warned = lines(await podman("logs", "bare")).filter((l) =>
            /BASE_URL: not set/.test(l)
          );
          assert.equal(warned.length, 1);
          assert.match(warned[0], /container's own address/);
          const mount = await Deno.makeTempDir({ prefix: "bind-" });
          const refused = await e.podman(
            "run",
            "--rm",
            "-v",
            `${mount}:/app/data`,
            "chat-integrations",
          );
          await Deno.remove(mount, { recursive: true });
          assert.equal(refused.code, 1, refused.out);
          assert.equal(lines(refused.out).length, 1, refused.out);
          assert.match(refused.out, /can't write to \/app\/data.*chown -R 1993:1993/);
          // The page's wait, on a container that exits at start: it ends, showing why.
          const unwritable = await Deno.makeTempDir({ prefix: "bind-" });
          const failing = start.split("\n")
            .filter((l) => !/docker (build|volume create)/.test(l)).join("\n")
            .replaceAll(/\bchat\b(?!-)/g, "chat-fails")
            .replace("chat-data:/app/data", `${unwritable}:/app/data`);
          const waited = await shell.run(
            // In a subshell, on a port of its own, stopped if it spins past two minutes.
            `( PORT=${freePort()}\n${failing}\n) & job=$!\n` +
              `( sleep 120; kill $job ) >/dev/null 2>&1 & watch=$!\n` +
              `wait $job || true; kill $watch 2>/dev/null || true`,
          );
          await e.podman("rm", "-f", "chat-fails");
          await Deno.remove(unwritable, { recursive: true });
          assert.match(waited.out, /The container is not running; its last lines:/, waited.out);
          assert.match(waited.out, /can't write to \/app\/data/, waited.out);
          for (const to of ["/app/backups/x.sqlite3", "/app/x.sqlite3"]) {
            const cli = ["admin", "backup", "--to", to];
            const refusal = await e.podman("exec", "chat", ...cli);
            assert.notEqual(refusal.code, 0);
            assert.equal(lines(refusal.out).length, 1, refusal.out);
          }
        },
      );

      await t.step(
        "a start reads the image's cache alone: no network, no package metadata",
        async () => {
          // Deno fetches a package's metadata again whenever its cached copy is missing; the
          // service and the admin CLI must start from the lock file and the package files alone.
          const forget = "rm -f /deno-dir/npm/*/*/registry.json /deno-dir/npm/*/@*/*/registry.json";
          const cmd = JSON.parse(
            await podman(
              "image",
              "inspect",
              "--format",
              "{{json .Config.Cmd}}",
              "chat-integrations",
            ),
          );
          const started = await e.podman(
            ...["run", "-d", "--name", "offline", "--network", "none", "-e", "KV_PATH=:memory:"],
            ...["--entrypoint", "/bin/sh", "chat-integrations", "-c", `${forget}; exec deno "$@"`],
            ...["sh", ...cmd],
          );
          assert.equal(started.code, 0, started.out);
          await waitForLog(e, "offline", /Listening on/);
          const cli = await podman("exec", "offline", "admin", "help");
          assert.match(cli, /backup/);
          assert.match(cli, /Usage: admin <command>/, "the image's usage lines name its command");
          assert.doesNotMatch(await podman("logs", "offline") + cli, /Download|registry\.npmjs/);
        },
      );
    } finally {
      await e.close();
      await Deno.remove(shell.dir, { recursive: true });
    }
  },
});

/** The service's process id on this machine: tini's child in the container. */
async function servicePid(e: ContainerEngine): Promise<number> {
  const tini = (await e.podman("inspect", "--format", "{{.State.Pid}}", "chat")).out.trim();
  const children = await Deno.readTextFile(`/proc/${tini}/task/${tini}/children`);
  return Number(children.trim().split(/\s+/)[0]);
}

async function waitForLog(e: ContainerEngine, name: string, pattern: RegExp) {
  for (let i = 0; i < 100; i++) {
    if (pattern.test((await e.podman("logs", name)).out)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} never logged ${pattern}`);
}

Deno.test({
  name: "container: compose.yaml is one Compose accepts",
  ignore: !await commandExists("docker-compose"),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "compose-" });
    try {
      await Deno.copyFile(`${root}/compose.yaml`, `${dir}/compose.yaml`);
      await Deno.writeTextFile(`${dir}/app_key.txt`, "x\n");
      const out = await new Deno.Command("docker-compose", {
        args: ["config", "--quiet"],
        cwd: dir,
      })
        .output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

async function commandExists(cmd: string): Promise<boolean> {
  const out = await new Deno.Command("sh", { args: ["-c", `command -v ${cmd}`] }).output();
  return out.success;
}
