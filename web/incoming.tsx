import type { IncomingWebhook } from "../core/incoming_records.ts";
import type { Channel, User } from "../core/types.ts";
import {
  ActionButton,
  controlId,
  errorAttrs,
  FieldError,
  FormMessage,
  type FormState,
  Notice,
  PostForm,
  Revealed,
  SelectField,
  Table,
  TextField,
  Time,
  valueOf,
} from "./forms.tsx";
import { Layout, type Viewer } from "./layout.tsx";
import { SETTINGS } from "./paths.ts";

/** A channel a hook may post into, and the bots in it it may post as. */
export interface Target {
  channel: Channel;
  bots: User[];
}

export interface IncomingPageProps {
  viewer: Viewer;
  hooks: IncomingWebhook[];
  /** Channel names by id, for the list; only channels the viewer can see are named. */
  channelNames: Map<string, string>;
  /** What a new hook may post into, and as whom. */
  targets: Target[];
  /** Whether the team has a bot at all (else the form says to make one). */
  hasBots: boolean;
  form?: FormState;
  revealed?: Parameters<typeof Revealed>[0];
  notice?: string;
}

const SENDERS = [
  { value: "none", label: "Anyone with the URL" },
  { value: "standard", label: "Standard Webhooks (webhook-signature)" },
  { value: "github", label: "GitHub (X-Hub-Signature-256)" },
  { value: "stripe", label: "Stripe (Stripe-Signature)" },
];

/** The team's incoming webhooks: admins and owners only. */
export function IncomingPage(p: IncomingPageProps) {
  const live = p.hooks.filter((h) => !h.revoked_at);
  return (
    <Layout
      title="Incoming webhooks"
      viewer={p.viewer}
      current="incoming"
      canonical={p.revealed || p.form ? `${SETTINGS}/incoming` : undefined}
    >
      <Notice text={p.notice} />
      {p.revealed && <Revealed {...p.revealed} />}
      <p>
        An incoming webhook is a secret URL: anything that can POST <code>{`{"text": "..."}`}</code>
        {" "}
        to it posts into one channel as one bot.
      </p>
      {live.length === 0
        ? <p class="muted">No incoming webhooks.</p>
        : (
          <Table columns={["Name", "Channel", "Posts as", "Senders sign", "Created"]} actions>
            {live.map((h) => (
              <HookRow
                hook={h}
                channel={p.channelNames.get(h.channel_id)}
                csrf={p.viewer.csrf}
              />
            ))}
          </Table>
        )}
      <h2>New incoming webhook</h2>
      {p.targets.length === 0
        ? (
          <p class="muted">
            An incoming webhook posts into a channel as a bot that is in it:{" "}
            <a href={`${SETTINGS}/bots`}>
              {p.hasBots ? "add a bot to a channel" : "create a bot and add it to a channel"}
            </a>{" "}
            first.
          </p>
        )
        : (
          <PostForm
            action={`${SETTINGS}/incoming`}
            csrf={p.viewer.csrf}
            class="card"
            label="New incoming webhook"
          >
            <FormMessage form={p.form} />
            <TextField
              form={p.form}
              scope="new-hook"
              name="name"
              label="Name"
              placeholder="Build alerts"
            />
            <TargetField form={p.form} targets={p.targets} />
            <SelectField
              form={p.form}
              scope="new-hook"
              name="verify"
              label="Senders must sign"
              options={SENDERS}
              initial="none"
              hint="A signing sender's posts are taken only with its signature (docs/incoming-webhooks.md)."
            />
            <button type="submit" class="primary">Create incoming webhook</button>
          </PostForm>
        )}
    </Layout>
  );
}

/** A live hook in the list: where it posts, whether its senders sign, and what may be done. */
function HookRow(p: { hook: IncomingWebhook; channel: string | undefined; csrf: string }) {
  const h = p.hook;
  return (
    <tr data-incoming-id={h.id}>
      <th scope="row">{h.name}</th>
      <td data-label="Channel">
        {p.channel ?? "a channel you can't see"}
      </td>
      <td data-label="Posts as">{h.bot_name}</td>
      <td data-label="Senders sign">{h.verify?.scheme ?? "no"}</td>
      <td data-label="Created">
        <Time at={h.created_at} />
      </td>
      <td class="actions">
        {h.verify && (
          <ActionButton
            action={`${SETTINGS}/incoming/${h.id}/rotate-verify-secret`}
            csrf={p.csrf}
            label="Rotate signing secret"
            title={`Rotate the signing secret of ${h.name}`}
          />
        )}
        <ActionButton
          action={`${SETTINGS}/incoming/${h.id}/revoke`}
          csrf={p.csrf}
          label="Revoke"
          danger
          title={`Revoke ${h.name}`}
          confirm={`Revoke “${h.name}”? Its URL stops working at once.`}
        />
      </td>
    </tr>
  );
}

/**
 * One choice of channel and bot, grouped by channel: only bots that are in a channel are offered
 * for it, with no script needed to keep the two in step.
 */
function TargetField(p: { form?: FormState; targets: Target[] }) {
  const id = controlId("new-hook", "target");
  const chosen = valueOf(p.form, "target");
  const names = ["target", "channel", "bot"];
  return (
    <div class="field">
      <label for={id}>Posts into, as</label>
      <p class="hint">A channel, and a bot that is in it.</p>
      <select
        id={id}
        name="target"
        {...errorAttrs(p.form, names, id)}
      >
        {p.targets.map(({ channel, bots }) => (
          <optgroup label={`#${channel.name}`}>
            {bots.map((bot) => {
              const value = `${channel.id}:${bot.id}`;
              return (
                <option value={value} selected={value === chosen}>
                  #{channel.name} as {bot.name}
                </option>
              );
            })}
          </optgroup>
        ))}
      </select>
      <FieldError form={p.form} name={names} id={id} />
    </div>
  );
}
