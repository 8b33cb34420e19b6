/**
 * What a person's interaction with an app came to (decisions.md, "Slash commands", "Actions"): the
 * service asks the app (a command's form, a button's `block_actions`) and waits up to 3 seconds.
 * An empty 2xx acknowledges; a reply (`{ text, blocks, response_type }`) is delivered, to the
 * person alone or in the channel; no answer yet is `pending` (a later one still arrives); a
 * refused, unreachable or failing app is `failed`, in plain words. Never a 5xx for the app's fault.
 */
import type { Ctx } from "../context.ts";
import type { Message } from "../../core/types.ts";
import { ApiError } from "../../core/errors.ts";
import type { AttemptOutcome } from "../../core/outbound/send.ts";
import { type AppCalls, type AppRequest, NOT_CONNECTED } from "./app_call.ts";
import { type AppReply, readReply } from "./replies.ts";
import { NO_SIGNING_SECRET } from "./request_frame.ts";
import type { Ephemeral } from "../messages/ephemeral.ts";

export type InteractionStatus = "answered" | "acknowledged" | "pending" | "failed";

/** What an interaction came to: its status, and what the app's reply made. */
export interface Interaction {
  status: InteractionStatus;
  ephemeral: Ephemeral | null;
  message: Message | null;
  error: string | null;
}

/** What an app's reply made: shown to the person, or posted. */
export type Delivered = { ephemeral: Ephemeral | null; message: Message | null };

/**
 * Sends the request to the app over its transport and turns its answer into the interaction's;
 * `deliver` carries out a reply, now or when it comes late.
 */
export async function interact(
  ctx: Ctx,
  calls: AppCalls,
  { request, deliver }: { request: AppRequest; deliver: (reply: AppReply) => Promise<Delivered> },
): Promise<Interaction> {
  const none = { ephemeral: null, message: null };
  const outcome = await calls.callWaiting(ctx, request, async (late) => {
    const reply = answerOf(late);
    if (!("status" in reply)) await deliver(reply);
  });
  if (!outcome) return { ...none, status: "pending", error: null };
  const reply = answerOf(outcome);
  if ("status" in reply) return { ...none, ...reply };
  try {
    return { status: "answered", error: null, ...await deliver(reply) };
  } catch (e) {
    // The app's reply broke a rule (60 blocks, a text too long): the app's fault, not the
    // request of the person who ran the command, who never sent those blocks.
    if (!(e instanceof ApiError) || e.status !== 422) throw e;
    return { ...none, status: "failed", error: answerRefused(e) };
  }
}

/** Why the service refused what an app answered, field by field, for a person to read. */
export const answerRefused = (e: ApiError) =>
  `the app's answer was refused: ${
    e.errors
      ? Object.entries(e.errors).map(([field, words]) => `${field}: ${words.join(" ")}`).join("; ")
      : e.message
  }`;

/** An interaction that could not be sent: the app has request URLs but no signing secret. */
export const unsigned = (): Interaction => ({
  status: "failed",
  ephemeral: null,
  message: null,
  error: NO_SIGNING_SECRET,
});

/** What the app's answer asks for, or the status when there is nothing to deliver. */
function answerOf(
  outcome: AttemptOutcome,
): AppReply | { status: "acknowledged" | "failed"; error: string | null } {
  if (!outcome.succeeded) return { status: "failed", error: failureOf(outcome) };
  const body = outcome.response_body?.trim() ?? "";
  if (!body) return { status: "acknowledged", error: null };
  try {
    return readReply(body);
  } catch (e) {
    const why = e instanceof ApiError ? e.message : "an answer the service can't read";
    return { status: "failed", error: `the app answered with ${why}` };
  }
}

/** Why an app failed, in plain words; its own answer's words are never repeated. */
function failureOf(outcome: AttemptOutcome): string {
  const status = outcome.response_status;
  if (status === 401 || status === 403) {
    return `the app refused the request (HTTP ${status}): its signing secret may not be the one the service signs with`;
  }
  if (status !== null) return `the app answered HTTP ${status}`;
  if (outcome.error === NOT_CONNECTED) return NOT_CONNECTED;
  return `the app is unreachable (${outcome.error})`;
}
