/**
 * Podman, made ready to build and run the Docker image in a test: its own storage in a temp folder
 * (no image, container or volume of the machine's is touched, and the docs' names can be used as
 * written), and the base image: the real, pinned one where it can be pulled, else a stand-in.
 *
 * The stand-in is what denoland/deno is, made from this machine's files: this test's Deno binary,
 * the C libraries it links, Debian's tini-static as /tini, busybox-static for /bin/sh and the few
 * tools the docs' commands use (rm, stat) and coreutils' install, user deno (uid 1993), DENO_DIR=/deno-dir,
 * and deno_docker's entrypoint. It also trusts this machine's CA bundle (DENO_CERT), where a proxy
 * may sign the registry's TLS.
 */
export const PINNED_BASE =
  "docker.io/denoland/deno:2.9.6@sha256:2014dc167ece617ef7e7ba40631ac2234c59e75ce693e7cc2dc2602b3c87859d";
const STAND_IN = "localhost/deno-standin:2.9.6";

export interface ContainerEngine {
  /** The environment every podman command of the test runs with. */
  env: Record<string, string>;
  /** The base to build on, when not the Dockerfile's own. */
  baseImage: string | null;
  /** Runs podman; its exit code and output. */
  podman(...args: string[]): Promise<{ code: number; out: string }>;
  close(): Promise<void>;
}

const decode = (b: Uint8Array) => new TextDecoder().decode(b);

async function run(cmd: string, args: string[], env?: Record<string, string>, stdin?: Uint8Array) {
  const child = new Deno.Command(cmd, {
    args,
    env,
    stdin: stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin) {
    const writer = child.stdin.getWriter();
    await writer.write(stdin);
    await writer.close();
  }
  const out = await child.output();
  return { code: out.code, out: decode(out.stdout) + decode(out.stderr) };
}

const onPath = async (cmd: string) => (await run("sh", ["-c", `command -v ${cmd}`])).code === 0;

/**
 * Limits this machine lets a container have: podman's defaults (a million open files) can exceed
 * a sandbox's hard limits, and then no container starts. The service needs far less of either.
 */
async function limits(): Promise<string> {
  const text = await Deno.readTextFile("/proc/self/limits");
  const hard = (name: string, most: number) => {
    const v = text.match(new RegExp(`${name}\\s+\\S+\\s+(\\S+)`))?.[1];
    const n = Math.min(v && v !== "unlimited" ? Number(v) : most, most);
    return `${n}:${n}`;
  };
  return `"nofile=${hard("Max open files", 65536)}", "nproc=${hard("Max processes", 4096)}"`;
}

/** Podman's settings for this test: its own storage; runc where crun can't run (hybrid cgroups). */
async function configure(dir: string): Promise<Record<string, string>> {
  const runtime = await onPath("runc") ? `[engine]\nruntime = "runc"\n` : "";
  await Deno.writeTextFile(
    `${dir}/containers.conf`,
    `[containers]\ndefault_ulimits = [${await limits()}]\n${runtime}`,
  );
  await Deno.writeTextFile(
    `${dir}/storage.conf`,
    `[storage]\ndriver = "overlay"\ngraphroot = "${dir}/storage"\nrunroot = "${dir}/run"\n`,
  );
  return {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? dir,
    CONTAINERS_CONF: `${dir}/containers.conf`,
    CONTAINERS_STORAGE_CONF: `${dir}/storage.conf`,
  };
}

const ENTRYPOINT = `#!/bin/sh
set -e
case "$1" in
  bench | bundle | cache | check | compile | completions | coverage | doc | eval | fmt | help | info | init | install | lint | lsp | publish | repl | run | serve | task | test | types | upgrade )
    exec deno "$@";;
esac
exec "$@"
`;

/** The stand-in's files, tarred for `podman import`. */
async function standInTar(dir: string): Promise<Uint8Array> {
  const root = `${dir}/standin`;
  const deno = Deno.execPath();
  // Debian's busybox has no `install`: coreutils' own, which the real base has too.
  const install = (await run("sh", ["-c", "command -v install"])).out.trim();
  const libs = new Set<string>();
  for (const binary of [deno, install]) {
    for (const lib of (await run("ldd", [binary])).out.match(/\/\S*lib\S*\.so[.\d]*/g) ?? []) {
      libs.add(lib);
    }
  }
  const script = [
    `set -e; R='${root}'`,
    `mkdir -p "$R"/bin "$R"/usr/bin "$R"/usr/local/bin "$R"/etc/ssl/certs "$R"/deno-dir "$R"/tmp`,
    `cp '${deno}' "$R"/usr/bin/deno`,
    ...[...libs].map((l) => `mkdir -p "$R$(dirname '${l}')" && cp -L '${l}' "$R${l}"`),
    `cp '${install}' "$R"/usr/bin/install`,
    `cp "$(command -v busybox)" "$R"/bin/busybox`,
    `for a in sh cat chmod chown cp id kill ls mkdir mv rm sleep stat; do ln -s busybox "$R"/bin/$a; done`,
    `cp "$(command -v tini-static)" "$R"/tini`,
    `cp /etc/ssl/certs/ca-certificates.crt "$R"/etc/ssl/certs/`,
    `printf 'root:x:0:0:root:/root:/bin/sh\\ndeno:x:1993:1993::/home/deno:/bin/sh\\n' > "$R"/etc/passwd`,
    `printf 'root:x:0:\\ndeno:x:1993:\\n' > "$R"/etc/group`,
    `chown 1993:1993 "$R"/deno-dir && chmod 1777 "$R"/tmp`,
  ];
  const made = await run("sh", ["-c", script.join("\n")]);
  if (made.code !== 0) throw new Error(`building the stand-in failed:\n${made.out}`);
  await Deno.writeTextFile(`${root}/usr/local/bin/docker-entrypoint.sh`, ENTRYPOINT, {
    mode: 0o755,
  });
  const tar = await new Deno.Command("tar", {
    args: ["-C", root, "-cf", "-", "."],
    stdout: "piped",
  })
    .output();
  return tar.stdout;
}

async function standIn(dir: string, env: Record<string, string>): Promise<void> {
  const changes = [
    "ENV DENO_DIR=/deno-dir/",
    "ENV DENO_INSTALL_ROOT=/usr/local",
    "ENV DENO_CERT=/etc/ssl/certs/ca-certificates.crt",
    'ENTRYPOINT ["/tini", "--", "docker-entrypoint.sh"]',
    'CMD ["eval", "console.log(\'Welcome to Deno!\')"]',
  ].flatMap((c) => ["--change", c]);
  const imported = await run(
    "podman",
    ["import", ...changes, "-", STAND_IN],
    env,
    await standInTar(dir),
  );
  if (imported.code !== 0) throw new Error(`podman import failed:\n${imported.out}`);
}

/**
 * Podman ready to build and run the image, or why it can't be here (then the test skips, saying
 * so). What it needs and a real host has anyway: podman; for the stand-in, busybox-static and
 * tini-static (Debian's busybox-static and tini).
 */
export async function containerEngine(): Promise<ContainerEngine | { why: string }> {
  if (!await onPath("podman")) return { why: "Podman is not installed (apt-get install podman)" };
  const dir = await Deno.makeTempDir({ prefix: "containers-" });
  const env = await configure(dir);
  const podman = (...args: string[]) => run("podman", args, env);
  const close = async () => {
    // Not `system reset`: as root, that would also drop the machine's own networks.
    await podman("rm", "--all", "--force", "--time", "0");
    await podman("volume", "rm", "--all", "--force");
    await podman("rmi", "--all", "--force");
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  let baseImage: string | null = null;
  if ((await podman("pull", "--quiet", PINNED_BASE)).code !== 0) {
    if (!await onPath("busybox") || !await onPath("tini-static")) {
      await close();
      return {
        why:
          "the base image can't be pulled, and a stand-in needs busybox-static and tini (apt-get install busybox-static tini)",
      };
    }
    await standIn(dir, env);
    baseImage = STAND_IN;
  }
  const probe = await podman("run", "--rm", baseImage ?? PINNED_BASE, "eval", "console.log(1)");
  if (probe.code !== 0) {
    await close();
    return { why: `containers can't run here: ${probe.out.trim().split("\n").at(-1)}` };
  }
  return { env, baseImage, podman, close };
}
