import { SettingsError } from "../../core/settings.ts";
import { indexUserTokens } from "../tokens.ts";
import { keys } from "../keys.ts";
import { backfillFeedIndexes } from "../stream/feed_backfill.ts";
import { recountPendingJobs } from "../outbox/backlog.ts";
import type { Store } from "./store.ts";

/**
 * Layout steps. A new index that readers rely on comes in two releases, because the release
 * before it may still be writing to the same store (a rolling deploy): the first writes it in
 * every commit that changes what it indexes, and reads nothing from it; the next fills it for
 * what older releases wrote, and reads it. So the event feed's indexes by who may see an event
 * (`open_events`, `channel_events`, `user_closed_channels`): written from layout 2, filled and
 * read from layout 3 (kv/stream/feed_backfill.ts), for a feed whose cost follows what its reader sees.
 * An index nobody reads any more is dropped the same way: written on until the release after
 * the last that reads it.
 */

/** One step of the store's key layout: what it changes, and the data migration that does it. */
interface Step {
  to: number;
  what: string;
  /** Idempotent: several processes starting together may all run it. */
  run(kv: Store): Promise<void>;
}

const STEPS: Step[] = [
  { to: 1, what: "each user's tokens indexed by user", run: indexUserTokens },
  {
    to: 2,
    // Layout step 1 of 2 (kv/keys.ts): writers keep these from now on; nothing to fill yet.
    what: "the event feed's indexes by who sees an event, kept by every write",
    run: () => Promise.resolve(),
  },
  {
    to: 3,
    // Layout step 2 of 2: the release that reads them fills them for what older ones wrote.
    what:
      "the event feed's indexes by who sees an event, filled for older events and memberships; pending jobs counted again",
    run: async (kv) => {
      await backfillFeedIndexes(kv);
      await recountPendingJobs(kv);
    },
  },
];

/** The layout this release reads and writes. */
export const LAYOUT_VERSION = STEPS.at(-1)!.to;

interface Layout {
  version: number;
  upgraded_at: string;
}

/**
 * The store's layout version; null for a store nothing has been written to yet. Stores made
 * before the version was recorded have none: version 1 if their one migration ran, else 0.
 */
export async function readLayout(kv: Store): Promise<number | null> {
  const [layout, legacy] = await kv.getMany<[Layout, unknown]>([
    keys.layout(),
    keys.migration("user_tokens"),
  ]);
  if (layout.value) return layout.value.version;
  if (legacy.versionstamp !== null) return 1;
  for await (const _ of kv.list({ prefix: [] }, { limit: 1 })) return 0;
  return null;
}

/** Whether the store records its layout: a store this service (since layout 1's release) ran on. */
export const hasLayoutRecord = async (kv: Store) =>
  (await kv.get(keys.layout())).versionstamp !== null;

/**
 * Brings the store up to this release's layout, each step once and in order, and records it; a
 * store of a newer layout than this release knows is refused (a SettingsError naming both).
 * Returns the layout it found (null: a new store).
 */
export async function migrate(kv: Store): Promise<number | null> {
  const found = await readLayout(kv);
  if (found !== null && found > LAYOUT_VERSION) throw newer(found);
  if (found === LAYOUT_VERSION) return found;
  for (const step of STEPS) if (found !== null && step.to > found) await step.run(kv);
  await recordLayout(kv);
  return found;
}

/**
 * For the admin CLI, which never migrates: a store of another layout than this release's is
 * refused, in one line, before anything is written. A new store is this release's layout: it is
 * recorded, so what the CLI writes first is not taken for an old store's data by the next run.
 */
export async function requireLayout(kv: Store): Promise<void> {
  const found = await readLayout(kv);
  if (found === null) return await recordLayout(kv);
  if (found > LAYOUT_VERSION) throw newer(found);
  if (found < LAYOUT_VERSION) {
    throw new SettingsError(
      `KV_PATH: the store's layout is version ${found}, older than this release's (${LAYOUT_VERSION}); start the service on it once to upgrade it. The CLI changed nothing.`,
    );
  }
}

const newer = (found: number) =>
  new SettingsError(
    `KV_PATH: the store's layout is version ${found}, newer than this release knows (${LAYOUT_VERSION}); run the release that upgraded it, or a later one. Nothing was changed.`,
  );

/** Records LAYOUT_VERSION, unless a process of a newer release has recorded a higher one. */
async function recordLayout(kv: Store): Promise<void> {
  for (;;) {
    const current = await kv.get<Layout>(keys.layout());
    if ((current.value?.version ?? -1) >= LAYOUT_VERSION) return;
    const layout: Layout = { version: LAYOUT_VERSION, upgraded_at: new Date().toISOString() };
    if ((await kv.atomic().check(current).set(keys.layout(), layout).commit()).ok) return;
  }
}
