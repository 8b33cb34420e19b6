import type { Token, User } from "../domain/types.ts";
import { FormMessage, type FormState, Notice, PostForm, Revealed, TextField } from "./forms.tsx";
import { Layout, type Viewer } from "./layout.tsx";
import { SETTINGS } from "./paths.ts";
import { TokenForm, TokenTable } from "./tokens.tsx";

export interface BotsPageProps {
  viewer: Viewer;
  bots: { bot: User; tokens: Token[] }[];
  /** The new-bot form, when it comes back with errors. */
  form?: FormState;
  /** A bot's new-token form, when it comes back with errors. */
  tokenForm?: { botId: string; form: FormState };
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
      canonical={p.revealed || p.form || p.tokenForm ? `${SETTINGS}/bots` : undefined}
    >
      <Notice text={p.notice} />
      {p.revealed && <Revealed {...p.revealed} />}
      <p>
        A bot is a member of the workspace that an integration acts as. It sees only the channels it
        is added to.
      </p>
      {p.bots.length === 0 && <p class="muted">This team has no bots yet.</p>}
      {p.bots.map(({ bot, tokens }) => (
        <section class="bot" aria-labelledby={`bot-${bot.id}`} data-bot-id={bot.id}>
          <h2 id={`bot-${bot.id}`}>{bot.name}</h2>
          <p class="muted">
            Bot id <code>{bot.id}</code>
          </p>
          <TokenTable tokens={tokens} csrf={p.viewer.csrf} empty="No tokens." />
          <details open={p.tokenForm?.botId === bot.id}>
            <summary>New token for {bot.name}</summary>
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
