import { readAuditLog } from "../domain/audit_log.ts";
import { readAdminAudit } from "../domain/data/admin_requests.ts";
import { type Command, positiveIntFlag, uuidFlag } from "./command.ts";
import { findTeam } from "../domain/people/workspace.ts";

const DEFAULT_LIMIT = 50;

/** The team's audit log, and the service's admin log. */
export const auditCommands: Record<string, Command> = {
  "audit:list": {
    usage: "audit:list --team <team id> [--limit <n, default 50>]",
    summary:
      "The team's audit log, newest first: who did what to which token, bot, webhook or person.",
    async run(ctx, flags) {
      const limit = positiveIntFlag(flags, "limit", DEFAULT_LIMIT);
      const team = await findTeam(ctx, uuidFlag(flags, "team"));
      return (await readAuditLog(ctx, team.id, { limit, actor: null })).entries;
    },
  },
  "audit:admin": {
    usage: "audit:admin [--limit <n, default 50>]",
    summary: "What ran through the admin path (ADMIN_URL), and every request it refused, newest " +
      "first, with the address it came from (kept 90 days).",
    run(ctx, flags) {
      return readAdminAudit(ctx, positiveIntFlag(flags, "limit", DEFAULT_LIMIT));
    },
  },
};
