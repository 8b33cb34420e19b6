/**
 * A store's records as an export holds them, and writing them into another store (decisions.md,
 * "Moving a workspace between stores"; the file: docs/export-format.md). What is moved, rebuilt or
 * left behind is decided per prefix by the key table (kv/keys.ts `EXPORTED`): records are moved as
 * stored (secrets stay sealed); the events' indexes and the stream's log are rebuilt as the events
 * are written again, so that every versionstamp the target relies on is its own.
 */
import { indexViews } from "../apps/views.ts";
import type { Channel, OutboxEvent } from "../../core/types.ts";
import type { ViewStack } from "../../core/app_records.ts";
import { decode, decodeKey, encode, encodeKey, type Json } from "./export_format.ts";
import { EVENT_TTL_MS, keys } from "../keys.ts";
import { expiryOf, isMoved } from "../key_kinds.ts";
import { writeEvent } from "../outbox/outbox.ts";
import { isClosed } from "../../core/channel_kind.ts";
import type { Store } from "../store/store.ts";
import type { Plan } from "../store/plan.ts";
import { ConflictError } from "../../core/errors.ts";

/** One stored entry: its key and value as JSON, and when the target lets it expire. */
export interface ExportRecord {
  key: Json;
  value: Json;
  /** Epoch ms; absent for what is kept until deleted. */
  expires_at?: number;
}

const EVENTS = "events";

/**
 * Every record an export moves: the events last, oldest first, so that the target writes each
 * after the channel it happened in. Ones expired already are left out.
 */
export async function* exportRecords(kv: Store): AsyncGenerator<ExportRecord> {
  const now = Date.now();
  const pass = async function* (selector: Deno.KvListSelector, events: boolean) {
    for await (const e of kv.list(selector, { batchSize: 500 })) {
      const kind = e.key[0] as string;
      if (!isMoved(kind) || (kind === EVENTS) !== events) continue;
      const expires = expiryOf(e.key, e.value);
      if (expires !== null && expires <= now) continue;
      yield {
        key: encodeKey(e.key),
        value: encode(e.value),
        ...(expires === null ? {} : { expires_at: expires }),
      };
    }
  };
  yield* pass({ prefix: [] }, false);
  yield* pass({ prefix: [EVENTS] }, true);
}

/** What one commit of an import may hold: well inside KV Connect's 1,000 and 800 KiB. */
const COMMIT_MUTATIONS = 400;
const COMMIT_BYTES = 512 * 1024;
/** The mutations an event brings (kv/outbox/outbox.ts writeEvent), its stream marker included. */
const EVENT_MUTATIONS = 7;

/**
 * Writes `records` into `kv`, in commits within KV Connect's limits, and returns how many it
 * went through. Setting a key to the value it already has changes nothing, so an import cut
 * short and run again (`resuming`) finishes without duplicates: only an event, which also adds
 * to the stream's log, is not written again where it is already. The commits' bounds depend on
 * the records alone, so a resumed import ends with the keys of one run straight through.
 */
export async function importRecords(
  kv: Store,
  records: AsyncIterable<ExportRecord>,
  { resuming = false, first }: { resuming?: boolean; first?: (op: Plan) => void } = {},
): Promise<number> {
  const open = new Map<string, boolean>();
  let op = kv.atomic();
  first?.(op);
  let [mutations, bytes, count] = [0, 0, 0];
  const flush = async () => {
    if (op.mutations.length > 0 || op.events.length > 0) {
      if (!(await op.commit()).ok) throw new ConflictError("import: another import started");
    }
    op = kv.atomic();
    [mutations, bytes] = [0, 0];
  };
  for await (const record of records) {
    const key = decodeKey(record.key);
    // An older export may carry what only its own store meant (its import's state): left out.
    if (!isMoved(key[0])) continue;
    const value = decode(record.value);
    const size = JSON.stringify(record.value).length + JSON.stringify(record.key).length;
    const weight = key[0] === EVENTS
      ? EVENT_MUTATIONS
      : key[0] === "view_stacks"
      ? 1 + 2 * (value as ViewStack).views.length
      : 1;
    if (mutations + weight > COMMIT_MUTATIONS || bytes + 2 * size > COMMIT_BYTES) await flush();
    const expireIn = record.expires_at === undefined ? undefined : record.expires_at - Date.now();
    if (expireIn !== undefined && expireIn <= 0) continue;
    if (key[0] === EVENTS) {
      const event = value as OutboxEvent;
      // One there already (a resumed import) still takes its room in the batch: the batches, so
      // the stream log's entries, fall where a straight import puts them.
      if (!resuming || (await kv.get(key)).versionstamp === null) {
        const isOpen = await openness(kv, open, event.channel_id);
        writeEvent(op, event, { open: isOpen, expireIn: expireIn ?? EVENT_TTL_MS });
      }
    } else {
      if (key[0] === "channels") open.set(key[1] as string, !isClosed(value as Channel));
      op.set(key, value, expireIn === undefined ? undefined : { expireIn });
      // Each view's index to its stack is rebuilt from the stack, to expire with it.
      if (key[0] === "view_stacks") indexViews(op, value as ViewStack, expireIn);
    }
    [mutations, bytes, count] = [mutations + weight, bytes + 2 * size, count + 1];
  }
  await flush();
  return count;
}

/** Whether every human of the team sees the channel, from the records written or the store. */
async function openness(kv: Store, known: Map<string, boolean>, channelId: string) {
  let isOpen = known.get(channelId);
  if (isOpen === undefined) {
    const channel = (await kv.get<Channel>(keys.channel(channelId))).value;
    isOpen = channel !== null && !isClosed(channel);
    known.set(channelId, isOpen);
  }
  return isOpen;
}
