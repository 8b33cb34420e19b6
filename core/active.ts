import type { User } from "./types.ts";

/**
 * Whether a person or bot is active: not deactivated. A deactivated one keeps its records but
 * signs in, posts, is added and is written to nowhere, until reactivated.
 */
export const isActive = (u: Pick<User, "deactivated_at">): boolean => !u.deactivated_at;

/** An active person, not a bot: who signs in, and who the service writes to when it must. */
export const isActivePerson = (u: Pick<User, "type" | "deactivated_at">): boolean =>
  u.type === "human" && isActive(u);
