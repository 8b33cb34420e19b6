/** What a post may use up, or make once: records its commit checks besides the post's own. */

/**
 * A record a post uses up (a scheduled message): it must still be there when the post commits,
 * and goes in that commit with the keys of `alsoDelete`. Gone: 404, nothing posted.
 */
export interface UsedUp {
  key: Deno.KvKey;
  alsoDelete: Deno.KvKey[];
}

/**
 * A post made once per key for a while (an incoming webhook sender's delivery id): another within
 * `forMs` posts nothing and answers with the first's message.
 */
export interface Once {
  key: Deno.KvKey;
  forMs: number;
}

/** What a `Once` key holds: the message, and until when (expireIn alone is lazy). */
export interface Posting {
  message_id: string;
  until: number;
}

/** The 404 of a post whose `UsedUp` record is gone: posted or deleted meanwhile. */
export const USED_UP_GONE = "It was posted or deleted meanwhile.";
