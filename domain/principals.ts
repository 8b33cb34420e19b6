/**
 * Who acts: a token's subject (the API), a person signed in to the settings screen, or the
 * operator at the admin CLI; and how the policy and the audit log name each.
 */
import { SCOPES, type Subject, type User } from "../core/types.ts";

/** Who acts, as far as the rules care: a token's user, or a person signed in to the screen. */
export type Principal = Pick<Subject, "user_id" | "team_id" | "type" | "role">;

/** A principal, or null: the operator at the admin CLI. */
export type Who = Principal | null;

/** The acting person of the settings screen's and CLI's functions; null is the operator. */
export type Actor = User | null;

export const whoOf = (actor: Actor): Who =>
  actor && { user_id: actor.id, team_id: actor.team_id, type: actor.type, role: actor.role };

/**
 * A signed-in person as the subject of the domain functions the API also calls: the screen is
 * not limited by token scopes, only by these rules.
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

/** The audit log's actor of what a token (or a person on the screen) did. */
export const auditSubject = (s: Subject) => ({ actor_id: s.user_id, actor_name: s.name });

/** How the audit log names the operator at the admin CLI. */
export const OPERATOR_NAME = "operator (CLI)";

/** The audit log's actor of an action: the person, or the operator at the CLI. */
export const auditActor = (actor: Actor) => ({
  actor_id: actor?.id ?? null,
  actor_name: actor?.name ?? OPERATOR_NAME,
});
