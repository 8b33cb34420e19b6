import { SCOPES, type Token } from "../core/types.ts";
import {
  ActionButton,
  controlId,
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
  valuesOf,
} from "./forms.tsx";
import { Layout, type Viewer } from "./layout.tsx";
import { SETTINGS } from "./paths.ts";

/** Expiry choices of a new token, in days; "" never expires. */
export const EXPIRY_DAYS = ["", "7", "30", "90", "365"] as const;

const EXPIRY_OPTIONS = EXPIRY_DAYS.map((d) => ({
  value: d,
  label: d === "" ? "Never" : `In ${d} days`,
}));

const ACTIONS = ["read", "write"] as const;

/** The scopes by resource, in SCOPES' order: one row each, read beside write. */
const SCOPE_GROUPS: [string, string[]][] = Object.entries(
  Object.groupBy(SCOPES, (s) => s.split(":")[0]),
).map(([resource, scopes]) => [resource, scopes!.map((s) => s.split(":")[1])]);

const isExpired = (t: Token) => t.expires_at !== null && Date.parse(t.expires_at) <= Date.now();

/** Live tokens with their rotate and revoke buttons; revoked ones are gone from view. */
export function TokenTable(props: { tokens: Token[]; csrf: string; empty: string }) {
  const live = props.tokens.filter((t) => !t.revoked_at);
  if (live.length === 0) return <p class="muted">{props.empty}</p>;
  return (
    <Table columns={["Name", "Scopes", "Created", "Last used", "Expires"]} actions>
      {live.map((t) => (
        <tr data-token-id={t.id}>
          <th scope="row">{t.name}</th>
          <td data-label="Scopes">
            <ul class="scopes">{t.scopes.map((s) => <li>{s}</li>)}</ul>
          </td>
          <td data-label="Created">
            <Time at={t.created_at} />
          </td>
          <td data-label="Last used">
            <Time at={t.last_used_at} />
          </td>
          <td data-label="Expires">
            {isExpired(t) ? <strong>expired</strong> : <Time at={t.expires_at} />}
          </td>
          <td class="actions">
            <ActionButton
              action={`${SETTINGS}/tokens/${t.id}/rotate`}
              csrf={props.csrf}
              label="Rotate"
              title={`Rotate ${t.name}: a new value, the old one stops working`}
              confirm={`Rotate “${t.name}”? Its current value stops working at once.`}
            />
            <ActionButton
              action={`${SETTINGS}/tokens/${t.id}/revoke`}
              csrf={props.csrf}
              label="Revoke"
              danger
              title={`Revoke ${t.name}`}
              confirm={`Revoke “${t.name}”? Whatever uses it stops working at once.`}
            />
          </td>
        </tr>
      ))}
    </Table>
  );
}

/** Name, scope checkboxes and an optional expiry. */
export function TokenForm(
  props: {
    action: string;
    /** Tells this form's controls apart from other forms' on the page. */
    scope: string;
    csrf: string;
    form?: FormState;
    submit: string;
    label: string;
  },
) {
  const chosen = valuesOf(props.form, "scopes");
  const scopesId = controlId(props.scope, "scopes");
  return (
    <PostForm action={props.action} csrf={props.csrf} class="card" label={props.label}>
      <FormMessage form={props.form} />
      <TextField
        form={props.form}
        scope={props.scope}
        name="name"
        label="Name"
        required
        placeholder="ci-deploys"
      />
      <fieldset aria-describedby={props.form?.errors.scopes ? `${scopesId}-error` : undefined}>
        <legend>Scopes</legend>
        <div class="scope-grid">
          {SCOPE_GROUPS.map(([resource, actions]) => (
            <div class="scope-row" role="group" aria-label={resource}>
              <span class="resource">{resource}</span>
              {ACTIONS.map((action) =>
                actions.includes(action)
                  ? (
                    <label>
                      <input
                        type="checkbox"
                        name="scopes"
                        value={`${resource}:${action}`}
                        checked={chosen.includes(`${resource}:${action}`)}
                      />{" "}
                      <span class="visually-hidden">{resource}:</span>
                      {action}
                    </label>
                  )
                  : <span />
              )}
            </div>
          ))}
        </div>
        <FieldError form={props.form} name="scopes" id={scopesId} />
      </fieldset>
      <SelectField
        form={props.form}
        scope={props.scope}
        name="expires_in_days"
        label="Expires"
        options={EXPIRY_OPTIONS}
      />
      <button type="submit" class="primary">{props.submit}</button>
    </PostForm>
  );
}

export interface TokensPageProps {
  viewer: Viewer;
  tokens: Token[];
  form?: FormState;
  revealed?: { label: string; value: string };
  notice?: string;
}

/** A person's own personal access tokens. */
export function TokensPage(p: TokensPageProps) {
  return (
    <Layout
      title="Your tokens"
      viewer={p.viewer}
      current="tokens"
      canonical={p.revealed || p.form ? SETTINGS : undefined}
    >
      <Notice text={p.notice} />
      {p.revealed && <Revealed {...p.revealed} />}
      <p>
        Personal access tokens call the <a href="/api/v1/docs">REST API</a>{" "}
        as you, with the scopes you choose.
      </p>
      <TokenTable tokens={p.tokens} csrf={p.viewer.csrf} empty="You have no tokens yet." />
      <h2>New token</h2>
      <TokenForm
        action={`${SETTINGS}/tokens`}
        scope="new-token"
        csrf={p.viewer.csrf}
        form={p.form}
        submit="Create token"
        label="New token"
      />
    </Layout>
  );
}
