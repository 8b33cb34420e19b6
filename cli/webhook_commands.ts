import { subscriptionView } from "../domain/views.ts";
import { listTeamWebhooks } from "../domain/webhooks/webhooks.ts";
import {
  enableWebhook,
  rotateWebhookSecret,
  setSignatureScheme,
} from "../domain/webhooks/admin.ts";
import { SIGNATURE_SCHEMES, type SignatureScheme } from "../core/webhook_records.ts";
import { choiceFlag, type Command, requiredFlag, uuidFlag } from "./command.ts";
import { findTeam } from "../domain/people/workspace.ts";

/** Settings-screen actions on outgoing-webhook subscriptions. The CLI acts as the operator. */
export const webhookCommands: Record<string, Command> = {
  "webhook:list": {
    usage: "webhook:list --team <team id>",
    summary: "The team's outgoing webhook subscriptions.",
    async run(ctx, flags) {
      const team = await findTeam(ctx, uuidFlag(flags, "team"));
      return (await listTeamWebhooks(ctx, team.id)).map(subscriptionView);
    },
  },
  "webhook:enable": {
    usage: "webhook:enable --id <subscription id>",
    summary: "Re-enables a subscription disabled after failing too often.",
    async run(ctx, flags) {
      return subscriptionView(await enableWebhook(ctx, uuidFlag(flags, "id"), null));
    },
  },
  "webhook:signature-scheme": {
    usage: "webhook:signature-scheme --id <subscription id> --scheme <service|standard|both>",
    summary:
      "How a subscription's deliveries are signed: X-Service-Signature (service), Standard Webhooks' webhook-* headers (standard), or both.",
    async run(ctx, flags) {
      const given = requiredFlag(flags, "scheme") as SignatureScheme;
      const scheme = choiceFlag(flags, "scheme", SIGNATURE_SCHEMES, given);
      const id = uuidFlag(flags, "id");
      return subscriptionView(await setSignatureScheme(ctx, id, { scheme, actor: null }));
    },
  },
  "webhook:rotate-secret": {
    usage: "webhook:rotate-secret --id <subscription id>",
    summary: "Gives a subscription a new signing secret; the old one also signs for 24 hours.",
    async run(ctx, flags) {
      const { subscription, secret } = await rotateWebhookSecret(ctx, uuidFlag(flags, "id"), null);
      return { id: subscription.id, secret };
    },
  },
};
