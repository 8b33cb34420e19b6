/**
 * Who acts: one type, the `Subject`, for a token's user (the API) and a person signed in to the
 * settings screen (`subjectOfPerson`); null is the operator at the admin CLI. The policy reads a
 * subject's `Principal` part, and the audit log names each.
 */
import { SCOPES, type Subject, type User } from "../core/types.ts";

/** Who acts, as far as the rules care: the part of a subject they read. */
export type Principal = Pick<Subject, "user_id" | "team_id" | "type" | "role">;

/** A principal, or null: the operator at the admin CLI. */
export type Who = Principal | null;

/** Whoever acts through a domain function: a subject, or null for the operator at the CLI. */
export type Actor = Subject | null;

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

/** How the audit log names the operator at the admin CLI. */
export const OPERATOR_NAME = "operator (CLI)";

/** The audit log's actor of an action: the subject, or the operator at the CLI. */
export const auditActor = (actor: Actor) => ({
  actor_id: actor?.user_id ?? null,
  actor_name: actor?.name ?? OPERATOR_NAME,
});
