/**
 * A person answers a modal (decisions.md, "Modals"): submitting sends the app Slack's
 * `view_submission` and does what its `response_action` says (`errors`: 422 by block id;
 * `update` or `push`: the view now shown; `clear` or none: closed); closing sends `view_closed`
 * when the view asked for it.
 */
import type { Ctx } from "../context.ts";
import type { Subject } from "../../core/types.ts";
import { ApiError, invalid } from "../../core/errors.ts";
import { nowIso } from "../../core/ids.ts";
import { randomBase62 } from "../../core/random.ts";
import { retrying } from "../../core/retry.ts";
import { writeStack } from "../../kv/apps/views.ts";
import type { AttemptOutcome } from "../../core/outbound/send.ts";
import { type AppCalls, NOT_CONNECTED, payloadActor } from "./app_call.ts";
import { answerRefused } from "./interaction.ts";
import { appOf, stateOf, type Values, viewTrigger } from "./view_parts.ts";
import { interactive } from "./request_frame.ts";
import { personsStack, personView, pushOnto, readViewSpec, slackView } from "./views.ts";

/**
 * POST /views/{view}/submit: the view shown on top, submitted by its person. Answers the view
 * shown after (null when the modal closed), or the 422 of the app's `errors`.
 */
export async function submitView(
  ctx: Ctx,
  calls: AppCalls,
  { subject, viewId, values }: { subject: Subject; viewId: string; values: Values },
) {
  const { stack, view } = await personsStack(ctx, subject, { viewId, top: true });
  if (view.type === "home") throw invalid("view", "A Home is pressed, not submitted.");
  const state = await stateOf(ctx, { subject, view, values });
  const route = await appOf(ctx, stack);
  const payload = {
    type: "view_submission",
    ...await payloadActor(ctx, subject),
    trigger_id: await viewTrigger(ctx, stack),
    view: slackView(stack, view, state),
    response_urls: [],
  };
  const outcome = await calls.call(ctx, interactive(route, payload));
  return await actOn(ctx, { subject, viewId, answer: answerOf(outcome) });
}

type ResponseAction = { response_action?: string; errors?: unknown; view?: unknown };

/** The app's answer to a submission; a failure is the 422 on `view`, in plain words. */
function answerOf(outcome: AttemptOutcome): ResponseAction {
  if (!outcome.succeeded) {
    const why = outcome.response_status
      ? `it answered HTTP ${outcome.response_status}`
      : outcome.error === NOT_CONNECTED
      ? NOT_CONNECTED
      : `it is unreachable (${outcome.error})`;
    throw invalid("view", `The app did not take the submission: ${why}.`);
  }
  const body = outcome.response_body?.trim() ?? "";
  if (!body) return {};
  try {
    const value = JSON.parse(body);
    if (typeof value === "object" && value !== null) return value as ResponseAction;
  } catch {
    // Not JSON: nothing it asks for.
  }
  return {};
}

/** The view an app answered with; one that breaks a rule is the app's fault, on `view`. */
function appsView(value: unknown) {
  try {
    return readViewSpec(value);
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 422) throw e;
    throw invalid("view", `${answerRefused(e)}.`);
  }
}

/** Does what the app's `response_action` asks, on the stack as it is now. */
function actOn(
  ctx: Ctx,
  { subject, viewId, answer }: { subject: Subject; viewId: string; answer: ResponseAction },
) {
  if (answer.response_action === "errors") {
    const errors = Object.fromEntries(
      Object.entries((answer.errors ?? {}) as Record<string, unknown>).map(([k, v]) => [k, [
        String(v),
      ]]),
    );
    throw new ApiError(422, "The app refused the submission.", errors);
  }
  return retrying("answer submission", async () => {
    const { entry, stack } = await personsStack(ctx, subject, { viewId, top: true });
    if (answer.response_action === "push") {
      const pushed = await pushOnto(ctx, entry, appsView(answer.view));
      return pushed && { shown: personView(stack, pushed) };
    }
    if (answer.response_action === "update") {
      const spec = appsView(answer.view);
      const top = { ...stack.views.at(-1)!, ...spec, hash: `${Date.now()}.${randomBase62(8)}` };
      const changed = { ...stack, views: [...stack.views.slice(0, -1), top] };
      const written = await writeStack(ctx.kv, { entry, stack: changed });
      return written ? { shown: personView(changed, top) } : null;
    }
    const views = answer.response_action === "clear" ? [] : stack.views.slice(0, -1);
    const left = { ...stack, views, closed_at: views.length === 0 ? nowIso() : null };
    return await writeStack(ctx.kv, { entry, stack: left }) ? { shown: null } : null;
  }).then((done) => done.shown);
}

/**
 * POST /views/{view}/close: its person closes the modal; the app hears `view_closed` when the
 * view asked (`notify_on_close`), after the answer: nothing waits for it.
 */
export async function closeView(
  ctx: Ctx,
  calls: AppCalls,
  { subject, viewId }: { subject: Subject; viewId: string },
): Promise<void> {
  const { stack, view } = await retrying("close view", async () => {
    const found = await personsStack(ctx, subject, { viewId });
    if (found.view.type === "home") throw invalid("view", "A Home is not closed.");
    const closed = { ...found.stack, closed_at: nowIso() };
    return await writeStack(ctx.kv, { entry: found.entry, stack: closed }) ? found : null;
  });
  if (!view.notify_on_close) return;
  // An app uninstalled meanwhile hears nothing more; the person's close stands.
  const live = await appOf(ctx, stack).catch((e) => {
    if (e instanceof ApiError) return null;
    throw e;
  });
  if (!live) return;
  const payload = {
    type: "view_closed",
    ...await payloadActor(ctx, subject),
    view: slackView(stack, view),
    is_cleared: false,
  };
  calls.later(calls.call(ctx, interactive(live, payload)).then(() => {}));
}
