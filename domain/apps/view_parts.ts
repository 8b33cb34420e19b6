/**
 * What the interactions of a modal or a Home share: the app behind its stack, a trigger to push
 * with, and the view's state as the person left it.
 */
import type { Ctx } from "../context.ts";
import type { Block, Subject } from "../../core/types.ts";
import type { StoredView, ViewStack } from "../../core/app_records.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { randomBase62, sha256Hex } from "../../core/random.ts";
import { own, table } from "../../core/tables.ts";
import { liveInstall } from "./live_install.ts";
import { insertTrigger } from "../../kv/apps/responses.ts";
import { interactionsUrl } from "./app_call.ts";
import { type AppRoute, routeTo } from "./request_frame.ts";
import { TRIGGER_MS } from "./responses.ts";
import type { Element } from "../messages/block_elements.ts";
import { chosen, type Given, isEmpty } from "./element_values.ts";

/** What a person typed or picked: by block id, then action id, Slack's shape. */
export type Values = Record<string, Record<string, Given>>;

type InputBlock = Block & { block_id: string; element: Element; optional?: boolean };

/**
 * The view's state as Slack gives it: every input's value, `null` (or `[]`) for one left empty,
 * each checked against its element; 422 on `values` for one that is not the view's, a choice it
 * does not offer, or a required input left empty.
 */
export async function stateOf(
  ctx: Ctx,
  { subject, view, values, required = true }: {
    subject: Subject;
    view: StoredView;
    values: Values;
    /** Whether an input left empty is refused (a submission), or not (a press meanwhile). */
    required?: boolean;
  },
) {
  const inputs = view.blocks.flatMap((b, i) =>
    b.type === "input" ? [{ ...b, block_id: b.block_id ?? `block-${i}` } as InputBlock] : []
  );
  for (const [blockId, actions] of Object.entries(values)) {
    for (const actionId of Object.keys(actions)) {
      if (!inputs.some((b) => b.block_id === blockId && b.element.action_id === actionId)) {
        throw invalid("values", `The view has no input ${blockId}/${actionId}.`);
      }
    }
  }
  const state = table<Record<string, unknown>>();
  for (const input of inputs) {
    const actionId = input.element.action_id ?? "";
    const name = `${input.block_id}/${actionId}`;
    const given = own(own(values, input.block_id), actionId) ?? {};
    if (required && !input.optional && isEmpty(given)) {
      throw invalid("values", `${name}: is required.`);
    }
    const fields = await chosen({ ctx, subject, field: "values", name }, input.element, given);
    (state[input.block_id] ??= table())[actionId] = { type: input.element.type, ...fields };
  }
  return state;
}

/** The app behind an open stack, live; an uninstalled app's views are gone. */
export async function appOf(ctx: Ctx, stack: ViewStack): Promise<AppRoute> {
  const app = (await liveInstall(ctx, { teamId: stack.team_id, appId: stack.app_id }))?.app;
  const url = app && interactionsUrl(app);
  if (!app || url === undefined) throw notFound("No such view.");
  const route = await routeTo(ctx, app, url);
  if (route === "unsigned") {
    throw invalid("view", "The app has no signing secret (ask the operator).");
  }
  return route;
}

/** A trigger for the app to push onto this modal with. */
export async function viewTrigger(ctx: Ctx, stack: ViewStack): Promise<string> {
  const secret = randomBase62(40);
  await insertTrigger(ctx.kv, sha256Hex(secret), {
    app_id: stack.app_id,
    team_id: stack.team_id,
    user_id: stack.user_id,
    channel_id: stack.channel_id,
    expires_at: new Date(Date.now() + TRIGGER_MS).toISOString(),
    used: false,
    // A Home's press opens a modal; only a modal's is pushed onto.
    view_stack_id: stack.views[0].type === "modal" ? stack.id : null,
  });
  return `trigger.${secret}`;
}
