import type { Channel, Token, User } from "../core/types.ts";
import {
  ActionButton,
  FormMessage,
  type FormState,
  Notice,
  PostForm,
  Revealed,
  SelectField,
  TextField,
} from "./forms.tsx";
import { Layout, type Viewer } from "./layout.tsx";
import { SETTINGS } from "./paths.ts";
import { TokenForm, TokenTable } from "./tokens.tsx";

/** A bot as its page shows it. */
export interface ShownBot {
  bot: User;
  tokens: Token[];
  /** The channels it is in, direct messages left out. */
  channels: Channel[];
  /** The team's open channels it is not in. */
  joinable: Channel[];
  /** The private channels and direct messages it is in: what a token for it reads. */
  reach: Channel[];
}

export interface BotsPageProps {
  viewer: Viewer;
  bots: ShownBot[];
  /** The new-bot form, when it comes back with errors. */
  form?: FormState;
  /** A bot's new-token form, when it comes back with errors. */
  tokenForm?: { botId: string; form: FormState };
  /** A bot's add-to-channel form, when it comes back with errors. */
  channelForm?: { botId: string; form: FormState };
  revealed?: { label: string; value: string };
  notice?: string;
}

/** The team's bots and their tokens: admins and owners only. */
export function BotsPage(p: BotsPageProps) {
  return (
    <Layout
      title="Bots"
      viewer={p.viewer}
      current="bots"
      canonical={p.revealed || p.form || p.tokenForm || p.channelForm
        ? `${SETTINGS}/bots`
        : undefined}
    >
      <Notice text={p.notice} />
      {p.revealed && <Revealed {...p.revealed} />}
      <p>
        A bot is a member of the workspace that an integration acts as. It sees only the channels it
        is added to.
      </p>
      {p.bots.length === 0 && <p class="muted">This team has no bots yet.</p>}
      {p.bots.map(({ bot, tokens, reach, channels, joinable }) => (
        <section class="bot" aria-labelledby={`bot-${bot.id}`} data-bot-id={bot.id}>
          <h2 id={`bot-${bot.id}`}>{bot.name}</h2>
          <p class="muted">
            Bot id <code>{bot.id}</code>
          </p>
          <Channels
            bot={bot}
            channels={channels}
            joinable={joinable}
            csrf={p.viewer.csrf}
            form={p.channelForm?.botId === bot.id ? p.channelForm.form : undefined}
          />
          <TokenTable tokens={tokens} csrf={p.viewer.csrf} empty="No tokens." />
          <details open={p.tokenForm?.botId === bot.id}>
            <summary>New token for {bot.name}</summary>
            <Reach bot={bot} channels={reach} />
            <TokenForm
              action={`${SETTINGS}/bots/${bot.id}/tokens`}
              scope={`bot-${bot.id}`}
              csrf={p.viewer.csrf}
              form={p.tokenForm?.botId === bot.id ? p.tokenForm.form : undefined}
              submit={`Create token for ${bot.name}`}
              label={`New token for ${bot.name}`}
            />
          </details>
        </section>
      ))}
      <h2>New bot</h2>
      <PostForm action={`${SETTINGS}/bots`} csrf={p.viewer.csrf} class="card" label="New bot">
        <FormMessage form={p.form} />
        <TextField
          form={p.form}
          scope="new-bot"
          name="name"
          label="Name"
          required
          placeholder="deploy-bot"
        />
        <button type="submit" class="primary">Create bot</button>
      </PostForm>
    </Layout>
  );
}

/**
 * What a token for the bot will read beyond public channels, shown before it is made: an admin
 * who mints a token for a bot in a private channel can read that channel through it.
 */
function Reach(props: { bot: User; channels: Channel[] }) {
  if (props.channels.length === 0) {
    return (
      <p class="muted reach">
        {props.bot.name}{" "}
        is in no private channel or direct message: a token for it reads only the public channels it
        is added to.
      </p>
    );
  }
  return (
    <div class="reach warning" role="note">
      <p>
        A token for {props.bot.name} reads everything in these private conversations, as{" "}
        {props.bot.name} does:
      </p>
      <ul>
        {props.channels.map((c) => (
          <li>
            {c.is_direct ? `Direct message: ${c.name}` : `Private channel: ${c.name}`}
            {c.is_archived ? " (archived)" : ""}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The channels a bot is in, each with a way out, and a way into another. */
function Channels(
  p: { bot: User; channels: Channel[]; joinable: Channel[]; csrf: string; form?: FormState },
) {
  const base = `${SETTINGS}/bots/${p.bot.id}/channels`;
  return (
    <div class="bot-channels">
      {p.channels.length === 0
        ? <p class="muted">In no channel yet: it can't read or post anywhere.</p>
        : (
          <ul class="channel-list" aria-label={`Channels ${p.bot.name} is in`}>
            {p.channels.map((ch) => (
              <li>
                <span>
                  #{ch.name}
                  {ch.visibility === "private" ? " (private)" : ""}
                  {ch.is_archived ? " (archived)" : ""}
                </span>
                {!ch.is_general && !ch.is_archived && (
                  <ActionButton
                    action={`${base}/${ch.id}/remove`}
                    csrf={p.csrf}
                    label="Remove"
                    title={`Remove ${p.bot.name} from #${ch.name}`}
                    confirm={`Remove ${p.bot.name} from #${ch.name}? It stops reading and posting there.`}
                  />
                )}
              </li>
            ))}
          </ul>
        )}
      {p.joinable.length > 0 && (
        <PostForm
          action={base}
          csrf={p.csrf}
          class="add-to-channel"
          label={`Add ${p.bot.name} to a channel`}
        >
          <FormMessage form={p.form} />
          <SelectField
            form={p.form}
            scope={`bot-${p.bot.id}`}
            name="channel"
            label="Add to a channel"
            options={p.joinable.map((ch) => ({
              value: ch.id,
              label: `#${ch.name}${ch.visibility === "private" ? " (private)" : ""}`,
            }))}
            alsoErrorsOf={["user_id"]}
          />
          <button type="submit">Add {p.bot.name}</button>
        </PostForm>
      )}
    </div>
  );
}
