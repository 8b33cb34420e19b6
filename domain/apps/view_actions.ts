/**
 * Presses inside views (decisions.md, "Presses inside views"): the person of a modal presses one
 * of the view's elements (a button, a menu, a date, an input that dispatches its action). The app
 * gets Slack's `block_actions` with `container: { type: "view" }`, the view with its state as the
 * person left it, and a fresh `trigger_id` tied to the modal, so a button can push a second view
 * (`views.push`) or the app can change this one (`views.update`). The press answers as a message's
 * does: whether the app took it.
 */
import type { Ctx } from "../context.ts";
import type { Subject } from "../../core/types.ts";
import { ApiError } from "../../core/errors.ts";
import { type AppCalls, payloadActor } from "./app_call.ts";
import { interact, type Interaction } from "./interaction.ts";
import { type Press, pressOf } from "./pressable.ts";
import { appOf, stateOf, type Values, viewTrigger } from "./view_parts.ts";
import { interactive } from "./request_frame.ts";
import { personsStack, personView, slackView } from "./views.ts";

/**
 * POST /views/{view}/actions: the view shown on top, pressed by its person. Answers how the app
 * took it, and the view shown once it did (the app may have updated or pushed one meanwhile).
 */
export async function pressInView(
  ctx: Ctx,
  calls: AppCalls,
  { subject, viewId, press, values = {} }: {
    subject: Subject;
    viewId: string;
    press: Press;
    values?: Values;
  },
) {
  const { stack, view } = await personsStack(ctx, subject, { viewId, top: true });
  const action = await pressOf(ctx, { subject, blocks: view.blocks, press, where: "view" });
  const state = await stateOf(ctx, { subject, view, values, required: false });
  const route = await appOf(ctx, stack);
  const payload = {
    type: "block_actions",
    ...await payloadActor(ctx, subject),
    container: { type: "view", view_id: view.id },
    trigger_id: await viewTrigger(ctx, stack),
    view: slackView(stack, view, state),
    actions: [action],
  };
  const took: Interaction = await interact(ctx, calls, {
    request: interactive(route, payload),
    // A press in a view is acknowledged; what the app does next, it does through the Web API.
    deliver: () => Promise.resolve({ ephemeral: null, message: null }),
  });
  // Slack reads nothing from the answer to a press in a view: any 2xx is an acknowledgement.
  const status = took.status === "answered" ? "acknowledged" : took.status;
  return { status, error: took.error, view: await shownNow(ctx, subject, viewId) };
}

/** The view now shown on the modal the press was in, or null once it closed. */
async function shownNow(ctx: Ctx, subject: Subject, viewId: string) {
  try {
    const { stack } = await personsStack(ctx, subject, { viewId });
    return personView(stack, stack.views.at(-1)!);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}
