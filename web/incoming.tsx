import type { Channel, IncomingWebhook, User } from "../core/types.ts";
import {
  ActionButton,
  FormMessage,
  type FormState,
  Notice,
  PostForm,
  Revealed,
  SelectField,
  Table,
  TextField,
  Time,
} from "./forms.tsx";
import { Layout, type Viewer } from "./layout.tsx";
import { SETTINGS } from "./paths.ts";

export interface IncomingPageProps {
  viewer: Viewer;
  hooks: IncomingWebhook[];
  /** Channel names by id, for the list; only channels the viewer can see are named. */
  channelNames: Map<string, string>;
  /** What a new hook may post into, and as whom. */
  channels: Channel[];
  bots: User[];
  form?: FormState;
  revealed?: { label: string; value: string };
  notice?: string;
}

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
          <Table columns={["Name", "Channel", "Posts as", "Created"]} actions>
            {live.map((h) => (
              <tr data-incoming-id={h.id}>
                <th scope="row">{h.name}</th>
                <td data-label="Channel">
                  {p.channelNames.get(h.channel_id) ?? "a channel you can't see"}
                </td>
                <td data-label="Posts as">{h.bot_name}</td>
                <td data-label="Created">
                  <Time at={h.created_at} />
                </td>
                <td class="actions">
                  <ActionButton
                    action={`${SETTINGS}/incoming/${h.id}/revoke`}
                    csrf={p.viewer.csrf}
                    label="Revoke"
                    danger
                    title={`Revoke ${h.name}`}
                    confirm={`Revoke “${h.name}”? Its URL stops working at once.`}
                  />
                </td>
              </tr>
            ))}
          </Table>
        )}
      <h2>New incoming webhook</h2>
      {p.bots.length === 0
        ? (
          <p class="muted">
            An incoming webhook posts as a bot: <a href={`${SETTINGS}/bots`}>create a bot</a>{" "}
            first, and add it to a channel.
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
            <SelectField
              form={p.form}
              scope="new-hook"
              name="channel"
              label="Channel"
              options={p.channels.map((c) => ({ value: c.id, label: `#${c.name}` }))}
            />
            <SelectField
              form={p.form}
              scope="new-hook"
              name="bot"
              label="Posts as"
              options={p.bots.map((b) => ({ value: b.id, label: b.name }))}
            />
            <p class="hint">The bot must be a member of the channel.</p>
            <button type="submit" class="primary">Create incoming webhook</button>
          </PostForm>
        )}
    </Layout>
  );
}
