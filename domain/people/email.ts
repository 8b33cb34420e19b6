/**
 * People's email addresses (decisions.md, "What real Slack apps use besides messages"): optional,
 * unique in a team, set when a person is made (`user:create --email`) or later (PATCH
 * /users/{user}), found by `users.lookupByEmail`, and shown only to tokens with
 * `users:read.email`.
 */
import type { Ctx } from "../context.ts";
import type { Subject, User } from "../../core/types.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { storedId } from "../../core/ids.ts";
import { retrying } from "../../core/retry.ts";
import { getUserEntry, replaceEmail, userIdByEmail } from "../../kv/people.ts";
import { getUser } from "../../kv/workspace.ts";
import { authorize } from "../policy.ts";
import { type Actor, auditActor } from "../principals.ts";

/** What mail systems take: a local part, one @, a dotted domain; 254 characters at most. */
const EMAIL = /^[^\s@<>(),;:"\[\]\\]{1,64}@[a-z0-9-]+(\.[a-z0-9-]+)+$/;

/** An address as stored and looked up: trimmed and lower-cased. */
const normalEmail = (given: string) => given.trim().toLowerCase();

/** An address as stored, or the 422 on `email`. */
export function cleanEmail(given: string): string {
  const email = normalEmail(given);
  if (email.length > 254 || !EMAIL.test(email)) {
    throw invalid("email", "The email must be an address like name@example.com.");
  }
  return email;
}

const taken = () => invalid("email", "Another person or bot of the team has this email.");

/** Refuses an address another person of the team already has. */
export async function emailFree(ctx: Ctx, teamId: string, email: string): Promise<void> {
  if (await userIdByEmail(ctx.kv, teamId, email)) throw taken();
}

/** Sets or clears (null) a person's email: the team's admins and the operator only. */
export async function changeEmail(
  ctx: Ctx,
  actor: Actor,
  { userId, email }: { userId: string; email: string | null },
): Promise<User> {
  const wanted = email === null ? null : cleanEmail(email);
  return await retrying("change email", async () => {
    const stored = storedId(userId);
    const entry = stored ? await getUserEntry(ctx.kv, stored) : null;
    if (!entry?.value) throw notFound("No such user.");
    const user = entry.value;
    authorize(actor, "user.email", user);
    if ((user.email ?? null) === wanted) return user;
    if (wanted) await emailFree(ctx, user.team_id, wanted);
    const next: User = { ...user, email: wanted };
    const done = await replaceEmail(ctx.kv, {
      entry: entry as Deno.KvEntry<User>,
      next,
      audit: {
        team_id: user.team_id,
        action: "user.email_changed",
        ...auditActor(actor),
        target_id: user.id,
        target_name: user.name,
      },
    });
    return done ? next : null;
  });
}

/** users.lookupByEmail: the person of the subject's team with this address, else 404. */
export async function userByEmail(ctx: Ctx, subject: Subject, email: string): Promise<User> {
  const id = await userIdByEmail(ctx.kv, subject.team_id, normalEmail(email));
  const user = id ? await getUser(ctx.kv, id) : null;
  if (!user) throw notFound("No person of the team has this email.");
  authorize(subject, "team.read", user);
  return user;
}

/** Whether the subject's token may read people's addresses. */
export const seesEmails = (subject: Subject) => subject.scopes.includes("users:read.email");
