/**
 * A person answers a modal (decisions.md, "Modals"): submitting sends the app Slack's
 * `view_submission` and does what its `response_action` says (`errors`: 422 by block id;
 * `update` or `push`: the view now shown; `clear` or none: closed); closing sends `view_closed`
 * when the view asked for it.
 */
import type { Ctx } from "../context.ts";
import type { Block, Subject } from "../../core/types.ts";
import type { StoredView, ViewStack } from "../../core/app_records.ts";
import { ApiError, invalid, notFound } from "../../core/errors.ts";
import { nowIso } from "../../core/ids.ts";
import { randomBase62, sha256Hex } from "../../core/random.ts";
import { retrying } from "../../core/retry.ts";
import { liveInstall } from "./live_install.ts";
import { insertTrigger } from "../../kv/responses.ts";
import { writeStack } from "../../kv/views.ts";
import { getTeam } from "../../kv/workspace.ts";
import { slugify } from "../channels/slug.ts";
import type { AttemptOutcome } from "../../core/outbound/send.ts";
import { type AppCalls, NOT_CONNECTED, signingSecretOf } from "./app_call.ts";
import { TRIGGER_MS } from "./responses.ts";
import { answerRefused } from "./interaction.ts";
import { personsStack, personView, pushOnto, readViewSpec, slackView } from "./views.ts";

/** What a person typed or picked: by block id, then action id, Slack's shape. */
export type Values = Record<string, Record<string, { value?: string }>>;

type InputBlock = Block & { element: { type: string; action_id?: string; options?: Option[] } };
type Option = { text: unknown; value: string };

/** The view's state as Slack gives it: each input's value, or the option picked; 422 on `values`. */
function stateOf(view: StoredView, values: Values) {
  const inputs = view.blocks.filter((b): b is InputBlock => b.type === "input");
  const state: Record<string, Record<string, unknown>> = {};
  for (const [blockId, actions] of Object.entries(values)) {
    for (const [actionId, given] of Object.entries(actions)) {
      const input = inputs.find((b) => b.block_id === blockId && b.element.action_id === actionId);
      if (!input) throw invalid("values", `The view has no input ${blockId}/${actionId}.`);
      const { type, options } = input.element;
      let entry: unknown = { type, value: given.value ?? null };
      if (type === "static_select") {
        const option = options?.find((o) => o.value === given.value);
        if (!option) {
          throw invalid("values", `${blockId}/${actionId} has no option ${given.value}.`);
        }
        entry = { type, selected_option: option };
      }
      (state[blockId] ??= {})[actionId] = entry;
    }
  }
  return state;
}

/** The app behind an open stack, live; an uninstalled app's views are gone. */
async function appOf(ctx: Ctx, stack: ViewStack) {
  const app = (await liveInstall(ctx, { teamId: stack.team_id, appId: stack.app_id }))?.app;
  const on = app?.interactivity?.is_enabled;
  const url = on ? app.interactivity!.request_url : null;
  if (!app || !on || (!url && !app.socket_mode_enabled)) throw notFound("No such view.");
  const secret = await signingSecretOf(ctx, app);
  if (!secret && !app.socket_mode_enabled) {
    throw invalid("view", "The app has no signing secret (ask the operator).");
  }
  return { app, url, secret };
}

/** Who submits or closes, as Slack's payloads name them. */
async function who(ctx: Ctx, subject: Subject) {
  const team = await getTeam(ctx.kv, subject.team_id);
  return {
    team: { id: subject.team_id, domain: slugify(team?.name ?? "team") },
    user: {
      id: subject.user_id,
      username: subject.name,
      name: subject.name,
      team_id: subject.team_id,
    },
  };
}

/** A trigger for the app to push onto this modal with. */
async function viewTrigger(ctx: Ctx, stack: ViewStack): Promise<string> {
  const secret = randomBase62(40);
  await insertTrigger(ctx.kv, sha256Hex(secret), {
    app_id: stack.app_id,
    team_id: stack.team_id,
    user_id: stack.user_id,
    channel_id: stack.channel_id,
    expires_at: new Date(Date.now() + TRIGGER_MS).toISOString(),
    used: false,
    view_stack_id: stack.id,
  });
  return `trigger.${secret}`;
}

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
  const state = stateOf(view, values);
  const { app, url, secret } = await appOf(ctx, stack);
  const payload = {
    type: "view_submission",
    token: "",
    api_app_id: app.id,
    ...await who(ctx, subject),
    trigger_id: await viewTrigger(ctx, stack),
    view: slackView(stack, view, state),
    response_urls: [],
    is_enterprise_install: false,
    enterprise: null,
  };
  const outcome = await calls.call(ctx, {
    app,
    type: "interactive",
    payload,
    url,
    signingSecret: secret,
  });
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
  const { app, url, secret } = live;
  const payload = {
    type: "view_closed",
    token: "",
    api_app_id: app.id,
    ...await who(ctx, subject),
    view: slackView(stack, view),
    is_cleared: false,
    is_enterprise_install: false,
  };
  calls.later(
    calls.call(ctx, { app, type: "interactive", payload, url, signingSecret: secret })
      .then(() => {}),
  );
}
