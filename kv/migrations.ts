import { indexUserTokens } from "./tokens.ts";
import { keys } from "./keys.ts";

/**
 * Data migrations, each run once per store and marked done. Every one is idempotent: two
 * processes starting together may both run it.
 */
const MIGRATIONS: Record<string, (kv: Deno.Kv) => Promise<void>> = {
  user_tokens: indexUserTokens,
};

export async function migrate(kv: Deno.Kv): Promise<void> {
  for (const [name, run] of Object.entries(MIGRATIONS)) {
    if ((await kv.get(keys.migration(name))).versionstamp !== null) continue;
    await run(kv);
    await kv.set(keys.migration(name), { at: new Date().toISOString() });
  }
}
