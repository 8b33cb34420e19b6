import { appView, createApp, listApps, removeApp, rotateAppSecret } from "../domain/apps/apps.ts";
import { installApp, uninstallApp } from "../domain/apps/installs.ts";
import {
  createAppFromManifest,
  exportManifest,
  rotateSigningSecret,
  updateAppFromManifest,
} from "../domain/apps/declared.ts";
import { appDeliveries } from "../domain/apps/deliveries.ts";
import { socketStatus } from "../domain/apps/socket/status.ts";
import { tokenResponse } from "../domain/apps/oauth.ts";
import { appById } from "../domain/apps/apps.ts";
import { notFound } from "../core/errors.ts";
import { deliveryView } from "../domain/views.ts";
import {
  type Command,
  type Flags,
  listFlag,
  positiveIntFlag,
  requiredFlag,
  uuidFlag,
} from "./command.ts";
import { scopesFlag } from "./scopes_flag.ts";
import {
  createAppToken,
  listAppLevelTokens,
  revokeAppToken,
} from "../domain/apps/socket/app_tokens.ts";
import { readManifestFile } from "./manifest_file.ts";

/** Warnings are notes (stderr): stdout holds the one JSON value the command prints. */
const warn = (say: (note: string) => void, warnings: string[]) => {
  for (const w of warnings) say(`warning: manifest ${w}`);
};

/** `app:create` from the flags: the way apps were registered before manifests. */
async function createFromFlags(ctx: Parameters<Command["run"]>[0], flags: Flags) {
  const { app, clientSecret } = await createApp(ctx, {
    name: requiredFlag(flags, "name"),
    redirectUris: listFlag(flags, "redirect-uris"),
    scopes: scopesFlag(flags),
    incomingWebhook: flags["incoming-webhook"] === "true",
  }, null);
  return { ...appView(app), client_secret: clientSecret };
}

/** OAuth apps and apps that listen: registered by the operator, installed into teams. */
export const appCommands: Record<string, Command> = {
  "app:create": {
    usage: "app:create (--manifest <file> | --name <name> --redirect-uris <url>[,<url>] " +
      "--scopes <a,b,...|all> [--incoming-webhook])",
    summary:
      "Registers an app, from a Slack-style manifest (JSON or YAML) or flags; prints its secrets once.",
    async run(ctx, flags, _calls, say) {
      if (flags.manifest === undefined) return await createFromFlags(ctx, flags);
      const made = await createAppFromManifest(ctx, await readManifestFile(flags.manifest), null);
      warn(say, made.warnings);
      return {
        ...appView(made.app),
        client_secret: made.clientSecret,
        signing_secret: made.signingSecret,
      };
    },
  },
  "app:update": {
    usage: "app:update --id <app id> --manifest <file>",
    summary:
      "Changes an app in place from its manifest; its installs follow (a new event URL is verified).",
    async run(ctx, flags, calls, say) {
      const { app, warnings } = await updateAppFromManifest(ctx, calls, {
        id: uuidFlag(flags, "id"),
        text: await readManifestFile(requiredFlag(flags, "manifest")),
        actor: null,
      });
      warn(say, warnings);
      return appView(app);
    },
  },
  "app:export": {
    usage: "app:export --id <app id>",
    summary: "Prints an app's manifest (app:create --manifest takes it back as it is).",
    run: (ctx, flags) => exportManifest(ctx, uuidFlag(flags, "id"), null),
  },
  "app:rotate-signing-secret": {
    usage: "app:rotate-signing-secret --id <app id>",
    summary:
      "Gives an app a new signing secret (printed once): what the service sends is signed with it.",
    async run(ctx, flags) {
      return { signing_secret: await rotateSigningSecret(ctx, uuidFlag(flags, "id"), null) };
    },
  },
  "app:install": {
    usage: "app:install --app <app id> --team <team id> [--channel <channel id>]",
    summary:
      "Installs an app into a team as an approved consent would; prints what its token grant would.",
    async run(ctx, flags) {
      const app = await appById(ctx, uuidFlag(flags, "app"));
      if (!app) throw notFound(`No app ${flags.app}.`);
      const installed = await installApp(ctx, {
        app,
        teamId: uuidFlag(flags, "team"),
        scopes: app.scopes,
        channelId: flags.channel === undefined ? null : uuidFlag(flags, "channel"),
        approvedBy: null,
      });
      return tokenResponse(app, installed);
    },
  },
  "app:deliveries": {
    usage: "app:deliveries --app <app id> [--limit <n, default 20>]",
    summary:
      "What the service sent an app lately (its events), newest first, with the answers; for an app in Socket Mode, its connections and backlog beside them.",
    async run(ctx, flags) {
      const deliveries = await appDeliveries(ctx, {
        appId: uuidFlag(flags, "app"),
        limit: positiveIntFlag(flags, "limit", 20),
        actor: null,
      });
      const list = deliveries.map((d) => ({ ...deliveryView(d), team_id: d.team_id }));
      const app = await appById(ctx, uuidFlag(flags, "app"));
      // Over a socket nothing is recorded per attempt: what stands is the connections and backlog.
      if (!app?.socket_mode_enabled) return list;
      return { socket_mode: await socketStatus(ctx, app.id), deliveries: list };
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
  "app:token": {
    usage: "app:token --app <app id> [--name <name>]",
    summary: "Makes an app-level xapp- token (connections:write) for Socket Mode; prints it once.",
    run: (ctx, flags) =>
      createAppToken(ctx, {
        appId: uuidFlag(flags, "app"),
        name: flags.name ?? null,
        actor: null,
      }),
  },
  "app:tokens": {
    usage: "app:tokens --app <app id>",
    summary: "An app's app-level tokens, without their values.",
    run: (ctx, flags) => listAppLevelTokens(ctx, { appId: uuidFlag(flags, "app"), actor: null }),
  },
  "app:token:revoke": {
    usage: "app:token:revoke --app <app id> --id <token id>",
    summary: "Revokes an app-level token: the connections it opened are closed (link_disabled).",
    async run(ctx, flags) {
      const [appId, tokenId] = [uuidFlag(flags, "app"), uuidFlag(flags, "id")];
      await revokeAppToken(ctx, { appId, tokenId, actor: null });
      return { id: tokenId, revoked: true };
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
