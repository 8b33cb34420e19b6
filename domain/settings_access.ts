import { SCOPES, type Subject, type User } from "./types.ts";
import { notFound } from "./errors.ts";

/**
 * Who may do what in the settings screen. An actor is the signed-in human; null is the operator
 * at the admin CLI, who may act on any team and is audited as the system.
 */
export type Actor = User | null;

/** Admins and owners manage the team's bots, subscriptions and incoming webhooks, and read its audit log. */
export const isTeamAdmin = (user: User): boolean =>
  user.type === "human" && (user.role === "admin" || user.role === "owner");

/** The audit log's actor id of an action. */
export const actorId = (actor: Actor): string | null => actor?.id ?? null;

/** Whose tokens an actor manages: its own; an admin also its team's bots'. */
export function mayManageTokensOf(
  actor: Actor,
  holder: { id: string; team_id: string; type: User["type"] },
): boolean {
  if (actor === null || holder.id === actor.id) return true;
  return holder.type === "bot" && holder.team_id === actor.team_id && isTeamAdmin(actor);
}

/**
 * Throws `hidden()` (a 404) unless the actor is the operator, or an admin of `teamId`: what an
 * actor may not manage, it is not told exists.
 */
export function assertAdminOf(actor: Actor, teamId: string, hidden = () => notFound()): void {
  if (actor !== null && (actor.team_id !== teamId || !isTeamAdmin(actor))) throw hidden();
}

/**
 * A signed-in person as the subject of the domain functions the API also calls: the screen is
 * not limited by token scopes, only by the person's role and what it can see.
 */
export const subjectOfPerson = (user: User): Subject => ({
  user_id: user.id,
  team_id: user.team_id,
  name: user.name,
  type: user.type,
  role: user.role,
  token_id: "",
  scopes: [...SCOPES],
});
