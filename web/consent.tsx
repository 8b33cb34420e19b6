import type { Channel, Scope } from "../core/types.ts";
import { FormMessage, type FormState, SelectField } from "./forms.tsx";
import { Layout, type Viewer } from "./layout.tsx";

/** Each scope as an admin approving an app reads it. */
export const SCOPE_WORDS: Record<Scope, string> = {
  "channels:read": "See the channels it is in, and their names and topics",
  "channels:write": "Create channels, rename them and archive them",
  "messages:read": "Read the messages and events of the channels it is in",
  "messages:write": "Post messages, and edit and delete its own",
  "reactions:write": "Add and remove its emoji reactions",
  "members:read": "See who is in the channels it is in",
  "members:write": "Add people and bots to channels, and remove them; change a person's email",
  "webhooks:read": "See its outgoing webhook subscriptions and their deliveries",
  "webhooks:write": "Subscribe to events with outgoing webhooks, and change or delete them",
  "commands": "Add its slash commands to the team, for people to run in their channels",
  "users:read.email": "See the email addresses of the team's people",
};

export interface ConsentPageProps {
  viewer: Viewer;
  appName: string;
  teamName: string;
  scopes: Scope[];
  /** The request's own parameters, sent again with the answer. */
  params: Record<string, string>;
  /** For an app that asked for an incoming webhook: where it may post. */
  channels: Channel[] | null;
  form?: FormState;
}

/**
 * What an admin sees before an app joins the team: who asks, for which team, to do what, and
 * where its incoming webhook would post. Two buttons; nothing happens until one is pressed.
 */
export function ConsentPage(p: ConsentPageProps) {
  return (
    <Layout title={`Install ${p.appName}`} viewer={p.viewer}>
      <div class="card consent">
        <p>
          <strong>{p.appName}</strong> asks to join <strong>{p.teamName}</strong>{" "}
          as a bot of its own. It will be able to:
        </p>
        <ul class="scope-words">
          {p.scopes.map((s) => (
            <li>
              {SCOPE_WORDS[s]} <code class="muted">{s}</code>
            </li>
          ))}
        </ul>
        <p class="hint">
          It sees only the channels its bot is added to. You can uninstall it at any time from the
          Apps page.
        </p>
        <form method="post" action="/oauth/authorize" aria-label={`Install ${p.appName}`}>
          <input type="hidden" name="_csrf" value={p.viewer.csrf} />
          {Object.entries(p.params).map(([name, value]) => (
            <input type="hidden" name={name} value={value} />
          ))}
          <FormMessage form={p.form} />
          {p.channels && (
            <SelectField
              form={p.form}
              scope="consent"
              name="channel"
              label="Post its messages to"
              hint="The app gets an incoming webhook into this channel, and its bot joins it."
              options={p.channels.map((ch) => ({ value: ch.id, label: `#${ch.name}` }))}
            />
          )}
          <div class="button-row">
            <button type="submit" name="decision" value="approve" class="primary">
              Install {p.appName}
            </button>
            <button type="submit" name="decision" value="deny">Cancel</button>
          </div>
        </form>
      </div>
    </Layout>
  );
}
