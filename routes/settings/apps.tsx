import { Hono } from "hono";
import type { Ctx } from "../../domain/context.ts";
import { appById } from "../../domain/apps/apps.ts";
import { installDeliveries } from "../../domain/apps/deliveries.ts";
import { installSocketStatus } from "../../domain/apps/socket/status.ts";
import type { AppInstall } from "../../core/app_records.ts";
import type { Subject } from "../../core/types.ts";
import { listInstalls, uninstallApp } from "../../domain/apps/installs.ts";
import { userById } from "../../domain/people/workspace.ts";
import { AppsPage } from "../../web/apps.tsx";
import { SETTINGS } from "../../web/paths.ts";
import type { SettingsEnv } from "./env.ts";
import { adminsOnly } from "./guard.tsx";
import { noticeOf, page } from "./render.ts";

const NOTICES = {
  uninstalled: "The app is uninstalled: its token, bot and incoming webhooks stopped working.",
};

/** An app in Socket Mode: its connections and backlog; null for one with request URLs. */
const socketOf = (ctx: Ctx) => async (install: AppInstall, actor: Subject) =>
  (await appById(ctx, install.app_id))?.socket_mode_enabled && !install.uninstalled_at
    ? await installSocketStatus(ctx, { install, actor })
    : null;

const nameOf = async (ctx: Ctx, id: string) => (await userById(ctx, id))?.name ?? "someone gone";

/** Who installed: a person by name, or the operator, whose CLI installs with no person (""). */
const installerOf = async (ctx: Ctx, id: string) =>
  id === "" ? "the operator (CLI)" : await nameOf(ctx, id);

/** The team's installed apps: admins and owners. */
export function appPages(ctx: Ctx) {
  return new Hono<SettingsEnv>()
    .use(adminsOnly)
    .get("/", async (c) => {
      const { viewer } = c.var;
      const installs = await listInstalls(ctx, viewer.user.team_id, viewer.subject);
      const socketOfInstall = socketOf(ctx);
      const shown = await Promise.all(installs.map(async (install) => ({
        install,
        app: await appById(ctx, install.app_id),
        botName: await nameOf(ctx, install.bot_user_id),
        installedBy: await installerOf(ctx, install.installed_by),
        deliveries: install.uninstalled_at
          ? []
          : await installDeliveries(ctx, { install, limit: 5, actor: viewer.subject }),
        socket: await socketOfInstall(install, viewer.subject),
      })));
      return page(
        c,
        <AppsPage viewer={viewer} installs={shown} notice={noticeOf(c, NOTICES)} />,
      );
    })
    .post("/:app/uninstall", async (c) => {
      const { viewer } = c.var;
      const appId = c.req.param("app");
      await uninstallApp(ctx, { teamId: viewer.user.team_id, appId, actor: viewer.subject });
      return c.redirect(`${SETTINGS}/apps?done=uninstalled`, 303);
    });
}
