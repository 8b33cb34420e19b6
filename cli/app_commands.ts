import { appView, createApp, listApps, removeApp, rotateAppSecret } from "../domain/apps/apps.ts";
import { uninstallApp } from "../domain/apps/installs.ts";
import { type Command, listFlag, requiredFlag, uuidFlag } from "./command.ts";
import { scopesFlag } from "./scopes_flag.ts";

/** OAuth apps: registered by the operator, installed by a team's admins. */
export const appCommands: Record<string, Command> = {
  "app:create": {
    usage: "app:create --name <name> --redirect-uris <url>[,<url>] --scopes <a,b,...|all> " +
      "[--incoming-webhook]",
    summary: "Registers an app that installs itself with OAuth; prints its client secret once.",
    async run(ctx, flags) {
      const { app, clientSecret } = await createApp(ctx, {
        name: requiredFlag(flags, "name"),
        redirectUris: listFlag(flags, "redirect-uris"),
        scopes: scopesFlag(flags),
        incomingWebhook: flags["incoming-webhook"] === "true",
      }, null);
      return { ...appView(app), client_secret: clientSecret };
    },
  },
  "app:list": {
    usage: "app:list",
    summary: "Every registered app, without secrets.",
    async run(ctx) {
      return (await listApps(ctx, null)).map(appView);
    },
  },
  "app:rotate-secret": {
    usage: "app:rotate-secret --id <app id>",
    summary: "Gives an app a new client secret (printed once); the old one stops working.",
    async run(ctx, flags) {
      return { client_secret: await rotateAppSecret(ctx, uuidFlag(flags, "id"), null) };
    },
  },
  "app:delete": {
    usage: "app:delete --id <app id>",
    summary:
      "Deletes an app: it can't install or redeem codes again; installs stay until uninstalled.",
    async run(ctx, flags) {
      const id = uuidFlag(flags, "id");
      await removeApp(ctx, id, null);
      return { id };
    },
  },
  "app:uninstall": {
    usage: "app:uninstall --team <team id> --app <app id>",
    summary:
      "Takes an app out of a team: its tokens revoked, its bot deactivated, its hooks revoked.",
    async run(ctx, flags) {
      const teamId = uuidFlag(flags, "team");
      const appId = uuidFlag(flags, "app");
      await uninstallApp(ctx, { teamId, appId, actor: null });
      return { app_id: appId, team_id: teamId };
    },
  },
};
