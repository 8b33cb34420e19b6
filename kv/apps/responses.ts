/**
 * An app's ways back to a person (decisions.md, "response_url", "Modals"): a `response_url` it
 * may post to a few times for half an hour, on any instance, and a `trigger_id` that opens one
 * view within seconds. Both are stored by the SHA-256 of their secret, and expire.
 */
import { keys } from "../keys.ts";
import type { Store } from "../store/store.ts";
import type { Plan } from "../store/plan.ts";

/** Where a `response_url` posts, for whom, and how often it has. */
export interface ResponseTarget {
  app_id: string;
  team_id: string;
  channel_id: string;
  /** The person who ran the command or pressed the button: ephemeral replies are theirs. */
  user_id: string;
  /** The app's bot, the author of replies in the channel. */
  bot_id: string;
  /** The message an action came from: what `replace_original` and `delete_original` act on. */
  message_id: string | null;
  uses: number;
  expires_at: string;
}

/** Kept until it expires, and a minute more, to tidy. */
const keptFor = (expiresAt: string) => Date.parse(expiresAt) - Date.now() + 60_000;

/**
 * Stores a new `response_url`'s target and, when given, a `trigger_id`'s, in one commit: a
 * command run or an action issues both, and the person waits for it.
 */
export async function insertAnswerWays(
  kv: Store,
  { response, trigger }: {
    response: { hash: string; target: ResponseTarget };
    trigger?: { hash: string; trigger: Trigger };
  },
) {
  const plan = kv.atomic().set(keys.responseUrl(response.hash), response.target, {
    expireIn: keptFor(response.target.expires_at),
  });
  if (trigger) {
    plan.set(keys.trigger(trigger.hash), trigger.trigger, {
      expireIn: keptFor(trigger.trigger.expires_at),
    });
  }
  await plan.commit();
}

export const getResponseTarget = (kv: Store, hash: string) =>
  kv.get<ResponseTarget>(keys.responseUrl(hash));

/** Counts one use, unless another was counted since `entry` was read: false then. */
export async function useResponseTarget(kv: Store, entry: Deno.KvEntry<ResponseTarget>) {
  const next = { ...entry.value, uses: entry.value.uses + 1 };
  const expireIn = keptFor(next.expires_at);
  return (await kv.atomic().check(entry).set(entry.key, next, { expireIn }).commit()).ok;
}

/** What a `trigger_id` may open a view for. */
export interface Trigger {
  app_id: string;
  team_id: string;
  user_id: string;
  channel_id: string;
  expires_at: string;
  used: boolean;
  /** The stack of the modal it came from (a submission's), for views.push; null otherwise. */
  view_stack_id?: string | null;
}

/** Stores a trigger alone: one a modal's submission hands the app. */
export async function insertTrigger(kv: Store, hash: string, trigger: Trigger) {
  await kv.set(keys.trigger(hash), trigger, { expireIn: keptFor(trigger.expires_at) });
}

/** Spends a trigger in `op`, which then fails if it was spent since `entry` was read. */
export function spendTrigger(op: Plan, entry: Deno.KvEntry<Trigger>) {
  const next = { ...entry.value, used: true };
  op.check(entry).set(entry.key, next, { expireIn: keptFor(next.expires_at) });
}

export const getTrigger = (kv: Store, hash: string) => kv.get<Trigger>(keys.trigger(hash));
