/** The key table decides what an export moves: every prefix the store writes is classified. */
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { EXPORTED } from "../kv/key_kinds.ts";

/** The first part of every key `keys` builds, given placeholder arguments. */
function prefixes(): Set<string> {
  const out = new Set<string>();
  for (const build of Object.values(keys) as ((...args: unknown[]) => Deno.KvKey)[]) {
    const key = build("a", "b", "c");
    if (key.length > 0) out.add(String(key[0]));
  }
  return out;
}

Deno.test("keys: every prefix the store writes says whether an export moves it", () => {
  const unclassified = [...prefixes()].filter((p) => !EXPORTED.has(p));
  assert.deepEqual(unclassified, [], "classify these in kv/key_kinds.ts");
  const unused = [...EXPORTED.keys()].filter((p) => !prefixes().has(p));
  assert.deepEqual(unused, [], "these are classified but no key builds them");
});
