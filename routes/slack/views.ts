/**
 * `views.*`: modals the app opens with a trigger, pushes and updates (domain/apps/views.ts), and
 * the Home it publishes for a person (domain/apps/home.ts).
 */
import { z } from "zod";
import { openView, pushView } from "../../domain/apps/views.ts";
import { updateView } from "../../domain/apps/view_update.ts";
import { publishHome } from "../../domain/apps/home.ts";
import type { Method, MethodCall } from "./method.ts";
import { args } from "./args.ts";

const withTrigger = z.object({ trigger_id: z.string(), view: z.unknown() });
const update = z.object({
  view_id: z.string().optional(),
  external_id: z.string().optional(),
  hash: z.string().optional(),
  view: z.unknown(),
}).refine((p) => p.view_id !== undefined || p.external_id !== undefined, {
  message: "view_id or external_id is required",
});

const publishArgs = z.object({
  user_id: z.string(),
  view: z.unknown(),
  hash: z.string().optional(),
});

const publish = async ({ ctx, subject, params }: MethodCall) => {
  const p = args(publishArgs, params);
  return {
    view: await publishHome(ctx, subject, { userId: p.user_id, view: p.view, hash: p.hash }),
  };
};

const open = async ({ ctx, subject, params }: MethodCall) => {
  const p = args(withTrigger, params);
  return { view: await openView(ctx, subject, { triggerId: p.trigger_id, view: p.view }) };
};

const push = async ({ ctx, subject, params }: MethodCall) => {
  const p = args(withTrigger, params);
  return { view: await pushView(ctx, subject, { triggerId: p.trigger_id, view: p.view }) };
};

const change = async ({ ctx, subject, params }: MethodCall) => {
  const p = args(update, params);
  return {
    view: await updateView(ctx, subject, {
      viewId: p.view_id,
      externalId: p.external_id,
      hash: p.hash,
      view: p.view,
    }),
  };
};

/**
 * No scope: the trigger, issued to the app's own bot, is what lets it open a view; a Home is the
 * calling bot's app's own.
 */
export const viewMethods: Record<string, Method> = {
  "views.open": { scope: null, run: open },
  "views.push": { scope: null, run: push },
  "views.update": { scope: null, run: change },
  "views.publish": { scope: null, run: publish },
};
