/**
 * Open event streams, per token, shared by every instance: how many a token holds is counted
 * here. A registration is renewed while its stream lasts and carries its expiry, so one whose
 * process died stops counting soon after (expiry is checked against the stored time).
 */
import { keys } from "./keys.ts";
import { commitInBatches } from "./commit.ts";
import type { Store } from "./store.ts";

interface Registration {
  expires_at: number;
}

/**
 * Registers a stream unless the token already holds `max` live ones. Null when a concurrent
 * registration beat this one (count again); false when the token holds `max`.
 */
export async function registerStream(
  kv: Store,
  { tokenId, streamId }: StreamRef,
  { expiresAt, max }: { expiresAt: number; max: number },
): Promise<boolean | null> {
  const version = await kv.get(keys.streamsVersion(tokenId));
  let live = 0;
  const now = Date.now();
  for await (const e of kv.list<Registration>({ prefix: keys.streams(tokenId) })) {
    if (e.value.expires_at > now) live++;
  }
  if (live >= max) return false;
  const { ok } = await kv.atomic()
    .check(version)
    .set(keys.streamsVersion(tokenId), now)
    .set(keys.stream(tokenId, streamId), { expires_at: expiresAt }, {
      expireIn: expiresAt - now + 60_000,
    })
    .commit();
  return ok ? true : null;
}

/** A stream's registration: the token it counts against. */
export interface StreamRef {
  tokenId: string;
  streamId: string;
}

/** Mutations per commit when renewing or dropping (one each; KV allows 1000). */
const BATCH = 500;

/** Renews registrations until `expiresAt`. */
export function renewStreams(kv: Store, streams: StreamRef[], expiresAt: number) {
  const expireIn = expiresAt - Date.now() + 60_000;
  return commitInBatches(
    kv,
    streams,
    BATCH,
    (op, s) => op.set(keys.stream(s.tokenId, s.streamId), { expires_at: expiresAt }, { expireIn }),
  );
}

/** Ends registrations: their streams count no more. */
export const dropStreams = (kv: Store, streams: StreamRef[]) =>
  commitInBatches(kv, streams, BATCH, (op, s) => op.delete(keys.stream(s.tokenId, s.streamId)));
