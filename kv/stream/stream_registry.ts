/**
 * Open event streams, per token and per user, shared by every instance: how many a token and its
 * user hold is counted here. A registration is renewed while its stream lasts and carries its
 * expiry, so one whose process died stops counting soon after (expiry is checked against the
 * stored time).
 */
import { keys } from "../keys.ts";
import { commitInBatches } from "../store/commit.ts";
import type { Store } from "../store/store.ts";

interface Registration {
  expires_at: number;
}

/** The live registrations under `prefix`, and the version their count checks. */
async function countLive(kv: Store, prefix: Deno.KvKey, versionKey: Deno.KvKey, now: number) {
  const version = await kv.get(versionKey);
  let live = 0;
  for await (const e of kv.list<Registration>({ prefix })) {
    if (e.value.expires_at > now) live++;
  }
  return { version, live };
}

/**
 * Registers a stream unless its token holds `max.token` live ones already, or its user
 * `max.user`. Null when a concurrent registration beat this one (count again); otherwise which
 * cap refused it, or true.
 */
export async function registerStream(
  kv: Store,
  { tokenId, userId, streamId }: StreamRef,
  { expiresAt, max }: { expiresAt: number; max: { token: number; user: number } },
): Promise<true | "token" | "user" | null> {
  const now = Date.now();
  const token = await countLive(kv, keys.streams(tokenId), keys.streamsVersion(tokenId), now);
  if (token.live >= max.token) return "token";
  const user = await countLive(kv, keys.userStreams(userId), keys.userStreamsVersion(userId), now);
  if (user.live >= max.user) return "user";
  const registration = { expires_at: expiresAt };
  const expireIn = expiresAt - now + 60_000;
  const { ok } = await kv.atomic()
    .check(token.version, user.version)
    .set(keys.streamsVersion(tokenId), now)
    .set(keys.userStreamsVersion(userId), now)
    .set(keys.stream(tokenId, streamId), registration, { expireIn })
    .set(keys.userStream(userId, streamId), registration, { expireIn })
    .commit();
  return ok ? true : null;
}

/** A stream's registration: the token and the user it counts against. */
export interface StreamRef {
  tokenId: string;
  userId: string;
  streamId: string;
}

/** Streams per commit when renewing or dropping (two mutations each; KV allows 1000). */
const BATCH = 250;

/** Renews registrations until `expiresAt`. */
export function renewStreams(kv: Store, streams: StreamRef[], expiresAt: number) {
  const expireIn = expiresAt - Date.now() + 60_000;
  return commitInBatches(
    kv,
    streams,
    BATCH,
    (op, s) =>
      op.set(keys.stream(s.tokenId, s.streamId), { expires_at: expiresAt }, { expireIn })
        .set(keys.userStream(s.userId, s.streamId), { expires_at: expiresAt }, { expireIn }),
  );
}

/** Ends registrations: their streams count no more. */
export const dropStreams = (kv: Store, streams: StreamRef[]) =>
  commitInBatches(
    kv,
    streams,
    BATCH,
    (op, s) =>
      op.delete(keys.stream(s.tokenId, s.streamId)).delete(keys.userStream(s.userId, s.streamId)),
  );
