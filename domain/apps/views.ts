/**
 * Modals (decisions.md, "Modals"): an app opens a view for a person with a `trigger_id` (from a
 * command run, a press, or a submission for a pushed one), once, within 30 seconds; pushes onto
 * it (3 views at most) and updates a view (checked against its `hash`). A view belongs to the
 * person whose trigger opened it: only they see it (anyone else gets the 404 an unknown view
 * gets), and their open streams get `view.opened`.
 */
import { z } from "zod";
import type { Ctx } from "../context.ts";
import type { Subject } from "../../core/types.ts";
import type { StoredView, ViewSpec, ViewStack } from "../../core/app_records.ts";
import { ApiError, invalid, notFound } from "../../core/errors.ts";
import { newId } from "../../core/ids.ts";
import { randomBase62, sha256Hex } from "../../core/random.ts";
import { retrying } from "../../core/retry.ts";
import { liveInstall } from "./live_install.ts";
import { relayNotice } from "../../kv/ephemeral.ts";
import { getTrigger, spendTrigger, type Trigger } from "../../kv/apps/responses.ts";
import { stackOf, viewIdByExternal, writeStack } from "../../kv/apps/views.ts";
import type { Plan } from "../../kv/store/plan.ts";
import { parseBlocks } from "../messages/blocks.ts";
import { withIds } from "./view_ids.ts";

/** Slack's limits: views on a stack, and how long an open one is kept. */
export const MAX_STACK = 3;
const STACK_MS = 24 * 3_600_000;

const plain = (max: number) =>
  z.object({ type: z.literal("plain_text"), text: z.string().min(1).max(max) });
const spec = z.object({
  type: z.enum(["modal", "home"], { error: "a view is a modal or a home" }),
  title: plain(24).optional(),
  blocks: z.unknown(),
  submit: plain(24).optional(),
  close: plain(24).optional(),
  callback_id: z.string().max(255).optional(),
  private_metadata: z.string().max(3_000).optional(),
  notify_on_close: z.boolean().optional(),
  external_id: z.string().max(255).optional(),
});

/**
 * A view as an app sent it (an object, or JSON text in a form), checked; 422 on `view`. A modal
 * (`views.open`, `push`, `update`) needs a title; a home (`views.publish`) has none.
 */
export function readViewSpec(
  value: unknown,
  { kind = "modal" }: { kind?: ViewSpec["type"] } = {},
): ViewSpec {
  let given = value;
  if (typeof value === "string") {
    try {
      given = JSON.parse(value);
    } catch {
      throw invalid("view", "The view must be a JSON object.");
    }
  }
  const parsed = spec.safeParse(given);
  if (!parsed.success) {
    const faults = parsed.error.issues.map((i) => `/view/${i.path.join("/")}: ${i.message}`);
    throw new ApiError(422, `The view is not valid: ${faults[0]}`, { view: faults });
  }
  const v = parsed.data;
  if (v.type !== kind) {
    throw invalid(
      "view",
      kind === "home" ? "views.publish takes a home view." : "Only a modal opens here.",
    );
  }
  if (kind === "modal" && !v.title) {
    throw new ApiError(422, "The view is not valid: /view/title: a modal needs a title", {
      view: ["/view/title: a modal needs a title"],
    });
  }
  const home = kind === "home";
  return {
    type: kind,
    title: v.title && !home ? { type: "plain_text", text: v.title.text } : null,
    blocks: withIds(parseBlocks(v.blocks, { view: true }) ?? []),
    submit: v.submit && !home ? { type: "plain_text", text: v.submit.text } : null,
    close: v.close && !home ? { type: "plain_text", text: v.close.text } : null,
    callback_id: v.callback_id ?? "",
    private_metadata: v.private_metadata ?? "",
    notify_on_close: v.notify_on_close ?? false,
    external_id: v.external_id ?? "",
  };
}

const newHash = () => `${Math.floor(Date.now() / 1000)}.${randomBase62(8)}`;

export const stored = (view: ViewSpec, previous: string | null, id = newId()): StoredView => ({
  ...view,
  id,
  hash: newHash(),
  previous_view_id: previous,
});

/** A view as Slack gives it to apps: in Web API answers and interaction payloads. */
export function slackView(stack: ViewStack, view: StoredView, values: unknown = {}) {
  return {
    id: view.id,
    team_id: stack.team_id,
    type: view.type,
    title: view.title,
    blocks: view.blocks,
    close: view.close,
    submit: view.submit,
    private_metadata: view.private_metadata,
    callback_id: view.callback_id,
    state: { values },
    hash: view.hash,
    clear_on_close: false,
    notify_on_close: view.notify_on_close,
    previous_view_id: view.previous_view_id,
    root_view_id: stack.id,
    app_id: stack.app_id,
    external_id: view.external_id,
    app_installed_team_id: stack.team_id,
    bot_id: stack.bot_user_id,
  };
}

/** A view as its person sees it (GET /views/{view}, `view.opened`): nothing the app keeps to itself. */
export const personView = (stack: ViewStack, view: StoredView) => ({
  id: view.id,
  app_id: stack.app_id,
  type: view.type,
  title: view.title,
  blocks: view.blocks,
  submit: view.submit,
  close: view.close,
  hash: view.hash,
  previous_view_id: view.previous_view_id,
  root_view_id: stack.id,
});

/** Tells the person's open streams what their modal now shows. */
export const announce = (ctx: Ctx, stack: ViewStack, view: StoredView) =>
  relayNotice(ctx, stack.team_id, {
    user_id: stack.user_id,
    channel_id: stack.channel_id,
    type: "view.opened",
    data: personView(stack, view),
  });

const expired = () =>
  invalid("trigger_id", "The trigger_id is unknown, used or expired (it works once, for 30 s).");

/** The trigger, if live and issued to the caller's app; what spending it must check. */
async function liveTrigger(
  ctx: Ctx,
  subject: Subject,
  triggerId: string,
): Promise<Deno.KvEntry<Trigger>> {
  const secret = /^trigger\.([0-9A-Za-z]{40})$/.exec(triggerId)?.[1];
  if (!secret) throw expired();
  const entry = await getTrigger(ctx.kv, sha256Hex(secret));
  const t = entry.value;
  if (!t || t.used || Date.parse(t.expires_at) <= Date.now() || t.team_id !== subject.team_id) {
    throw expired();
  }
  const live = await liveInstall(ctx, { teamId: t.team_id, appId: t.app_id });
  if (!live || live.bot.id !== subject.user_id) throw expired();
  return entry as Deno.KvEntry<Trigger>;
}

/** views.open: a new modal for the trigger's person, from the app whose bot calls. */
export function openView(
  ctx: Ctx,
  subject: Subject,
  { triggerId, view }: { triggerId: string; view: unknown },
) {
  const wanted = readViewSpec(view);
  return retrying("open view", async () => {
    const trigger = await liveTrigger(ctx, subject, triggerId);
    const t = trigger.value;
    await refuseTakenExternalId(ctx, { appId: t.app_id, teamId: t.team_id, view: wanted });
    const first = stored(wanted, null);
    const stack: ViewStack = {
      id: first.id,
      app_id: t.app_id,
      team_id: t.team_id,
      user_id: t.user_id,
      channel_id: t.channel_id,
      bot_user_id: subject.user_id,
      views: [first],
      closed_at: null,
      expires_at: new Date(Date.now() + STACK_MS).toISOString(),
    };
    const also = (op: Plan) => spendTrigger(op, trigger);
    if (!await writeStack(ctx.kv, { entry: null, stack, also })) return null;
    await announce(ctx, stack, first);
    return slackView(stack, first);
  });
}

/** views.push: another view on the modal a submission's trigger came from (3 at most). */
export function pushView(
  ctx: Ctx,
  subject: Subject,
  { triggerId, view }: { triggerId: string; view: unknown },
) {
  const wanted = readViewSpec(view);
  return retrying("push view", async () => {
    const trigger = await liveTrigger(ctx, subject, triggerId);
    const entry = trigger.value.view_stack_id
      ? await stackOf(ctx.kv, trigger.value.view_stack_id)
      : null;
    if (!entry || entry.value.closed_at) throw expired();
    const pushed = await pushOnto(ctx, entry, wanted, (op) => spendTrigger(op, trigger));
    return pushed && slackView(entry.value, pushed);
  });
}

/** Pushes a view onto a stack; null when the stack changed meanwhile (read it again). */
export async function pushOnto(
  ctx: Ctx,
  entry: Deno.KvEntry<ViewStack>,
  view: ViewSpec,
  also?: (op: Plan) => void,
): Promise<StoredView | null> {
  const stack = entry.value;
  if (stack.views.length >= MAX_STACK) {
    throw invalid("push", `A modal holds at most ${MAX_STACK} views.`);
  }
  const next = stored(view, stack.views.at(-1)!.id);
  const grown = { ...stack, views: [...stack.views, next] };
  if (!await writeStack(ctx.kv, { entry, stack: grown, also })) return null;
  await announce(ctx, grown, next);
  return next;
}

export const noView = () => notFound("No such view.");

/** An `external_id` is its app's for one open view of the team at a time (Slack's rule). */
async function refuseTakenExternalId(
  ctx: Ctx,
  { appId, teamId, view }: { appId: string; teamId: string; view: ViewSpec },
) {
  if (!view.external_id) return;
  const held = await viewIdByExternal(ctx.kv, { appId, teamId, externalId: view.external_id });
  const open = held && await stackOf(ctx.kv, held);
  if (open && !open.value.closed_at) {
    throw invalid("external_id", "Another open view of the app has this external_id.");
  }
}

/**
 * The open stack a view is in, for its person: the view must be in it (`top`: the one shown);
 * anyone else, and a view closed or gone, gets the 404 an unknown id gets.
 */
export async function personsStack(
  ctx: Ctx,
  subject: Subject,
  { viewId, top = false }: { viewId: string; top?: boolean },
) {
  const entry = await stackOf(ctx.kv, viewId);
  const stack = entry?.value;
  const view = stack?.views.find((v) => v.id === viewId);
  if (!entry || !stack || !view || stack.closed_at || stack.user_id !== subject.user_id) {
    throw noView();
  }
  // An app uninstalled meanwhile takes its modals with it.
  if (!await liveInstall(ctx, { teamId: stack.team_id, appId: stack.app_id })) throw noView();
  if (top && stack.views.at(-1)!.id !== viewId) {
    throw invalid("view", "Another view is shown on top of this one.");
  }
  return { entry, stack, view };
}

/** GET /views/{view}: the view, to its person only. */
export async function showView(ctx: Ctx, subject: Subject, viewId: string) {
  const { stack, view } = await personsStack(ctx, subject, { viewId });
  return personView(stack, view);
}
