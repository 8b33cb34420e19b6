import { type Context, Hono } from "hono";
import type { Ctx } from "../../domain/context.ts";
import { type Role, ROLES, type User } from "../../core/types.ts";
import { invalid } from "../../core/errors.ts";
import { changeRole, deactivateUser, reactivateUser } from "../../domain/people/people.ts";
import { permits } from "../../domain/policy.ts";
import {} from "../../domain/principals.ts";
import { listUsers } from "../../domain/people/workspace.ts";
import { PeoplePage, type PeoplePageProps } from "../../web/people.tsx";
import { SETTINGS } from "../../web/paths.ts";
import type { SettingsEnv } from "./env.ts";
import { adminsOnly } from "./guard.tsx";
import { formStateOf, noticeOf, page } from "./render.ts";

const NOTICES = {
  deactivated: "Deactivated: their tokens, sessions, streams and subscriptions have ended.",
  reactivated: "Reactivated: they can sign in and be given tokens again.",
  "role-changed": "The role is changed; it counts from their next request.",
};

/** The people page: the team's humans and bots, with what the viewer may do to each. */
async function showPeople(
  ctx: Ctx,
  c: Context<SettingsEnv>,
  extra: Partial<PeoplePageProps> = {},
  status: 200 | 403 | 404 | 422 = 200,
) {
  const { viewer } = c.var;
  const people = await listUsers(ctx, viewer.user.team_id, viewer.subject);
  const who = viewer.subject;
  const may = Object.fromEntries(people.map((u: User) => [u.id, {
    deactivate: permits(who, "user.deactivate", u),
    role: u.type === "human" && permits(who, "user.role", u),
  }]));
  return page(c, <PeoplePage viewer={viewer} people={people} may={may} {...extra} />, status);
}

const roleOf = (value: unknown): Role => {
  if (typeof value === "string" && (ROLES as readonly string[]).includes(value)) {
    return value as Role;
  }
  throw invalid("role", `The role must be one of ${ROLES.join(", ")}.`);
};

/** Deactivation, reactivation and roles: admins and owners (the policy says who may which). */
export function peoplePages(ctx: Ctx) {
  const act =
    (name: keyof typeof NOTICES, run: (c: Context<SettingsEnv>) => Promise<unknown>) =>
    async (c: Context<SettingsEnv>) => {
      try {
        await run(c);
        return c.redirect(`${SETTINGS}/people?done=${name}`, 303);
      } catch (e) {
        const state = formStateOf(e, c.var.form);
        return await showPeople(ctx, c, { form: state }, state.status);
      }
    };
  return new Hono<SettingsEnv>()
    .use(adminsOnly)
    .get("/", (c) => showPeople(ctx, c, { notice: noticeOf(c, NOTICES) }))
    .post(
      "/:id/deactivate",
      act("deactivated", (c) => deactivateUser(ctx, c.var.viewer.subject, c.req.param("id") ?? "")),
    )
    .post(
      "/:id/reactivate",
      act("reactivated", (c) => reactivateUser(ctx, c.var.viewer.subject, c.req.param("id") ?? "")),
    )
    .post(
      "/:id/role",
      act(
        "role-changed",
        (c) =>
          changeRole(ctx, c.var.viewer.subject, c.req.param("id") ?? "", roleOf(c.var.form.role)),
      ),
    );
}
