import { Hono } from "hono";
import { readAuditLog } from "../../domain/audit_log.ts";
import type { Ctx } from "../../domain/context.ts";
import { AuditPage } from "../../web/audit.tsx";
import type { SettingsEnv } from "./env.ts";
import { adminsOnly } from "./guard.tsx";
import { page } from "./render.ts";

export const AUDIT_PAGE_SIZE = 50;

/** The team's audit log, newest first, 50 to a page: admins and owners. */
export function auditPages(ctx: Ctx) {
  return new Hono<SettingsEnv>()
    .use(adminsOnly)
    .get("/", async (c) => {
      const { viewer } = c.var;
      const before = c.req.query("before");
      const log = await readAuditLog(ctx, viewer.user.team_id, {
        limit: AUDIT_PAGE_SIZE,
        before,
        actor: viewer.subject,
      });
      return page(
        c,
        <AuditPage
          viewer={viewer}
          entries={log.entries}
          before={log.before}
          paged={before !== undefined}
        />,
      );
    });
}
