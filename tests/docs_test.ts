/**
 * The README is what a newcomer reads first, and stays short enough to finish; everything else is
 * a short page in docs/ it links to. Every relative link of either leads to a file that exists.
 */
import assert from "node:assert/strict";

const root = new URL("..", import.meta.url);

async function pages(): Promise<Map<string, string>> {
  const out = new Map([["README.md", await Deno.readTextFile(new URL("README.md", root))]]);
  for await (const e of Deno.readDir(new URL("docs/", root))) {
    if (e.name.endsWith(".md")) {
      out.set(`docs/${e.name}`, await Deno.readTextFile(new URL(`docs/${e.name}`, root)));
    }
  }
  return out;
}

const lines = (text: string) => text.split("\n").length - 1;

Deno.test("docs: the README is under 250 lines, each docs/ page under 300", async () => {
  const all = await pages();
  assert.ok(all.size > 8, `${all.size} pages`);
  for (const [path, text] of all) {
    assert.ok(lines(text) < (path === "README.md" ? 250 : 300), `${path}: ${lines(text)} lines`);
  }
});

Deno.test("docs: every relative link leads to a file of the repository", async () => {
  const broken: string[] = [];
  for (const [path, text] of await pages()) {
    for (const [, target] of text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
      if (/^(https?|mailto):/.test(target)) continue;
      const url = new URL(target, new URL(path, root));
      try {
        await Deno.stat(url);
      } catch {
        broken.push(`${path} -> ${target}`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("docs: the Dockerfile names its base with its registry, the one the image test pulls", async () => {
  const dockerfile = await Deno.readTextFile(new URL("Dockerfile", root));
  const base = /^ARG DENO_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
  // Podman with Debian's defaults resolves no short name (`denoland/deno:…`): step 1 stopped.
  assert.match(base ?? "", /^[a-z0-9.-]+\.[a-z]+\/denoland\/deno:/, `ARG DENO_IMAGE=${base}`);
  const { PINNED_BASE } = await import("./container_engine.ts");
  assert.equal(base, PINNED_BASE);
});
