/** The screen's forms for outgoing subscriptions: a new one, a change, a test send, a scheme. */
import { type Channel, EVENT_TYPES } from "../core/types.ts";
import { schemeOf, type SignatureScheme, type Subscription } from "../core/webhook_records.ts";
import {
  controlId,
  FieldError,
  FormMessage,
  type FormState,
  PostForm,
  SelectField,
  TextField,
  valuesOf,
} from "./forms.tsx";
import { SETTINGS } from "./paths.ts";

/** Which events, as checkboxes: all of the API's. */
function EventChoices(p: { form?: FormState; scope: string; chosen: readonly string[] }) {
  const id = controlId(p.scope, "events");
  return (
    <fieldset aria-describedby={p.form?.errors.events ? `${id}-error` : undefined}>
      <legend>Events</legend>
      <div class="checks">
        {EVENT_TYPES.map((e) => (
          <label>
            <input type="checkbox" name="events" value={e} checked={p.chosen.includes(e)} /> {e}
          </label>
        ))}
      </div>
      <FieldError form={p.form} name="events" id={id} />
    </fieldset>
  );
}

/**
 * A new subscription, owned by the viewer (it hears what they can see), with the API's rules; its
 * signing secret is shown once on the page it leads to.
 */
export function NewWebhookForm(p: { csrf: string; channels: Channel[]; form?: FormState }) {
  const { form } = p;
  const chosen = valuesOf(form, "channel_ids");
  const channelsId = controlId("new", "channel_ids");
  return (
    <PostForm
      action={`${SETTINGS}/webhooks`}
      csrf={p.csrf}
      class="card"
      label="New subscription"
    >
      <FormMessage form={form} />
      <TextField form={form} scope="new" name="name" label="Name" required maxlength={255} />
      <TextField
        form={form}
        scope="new"
        name="url"
        label="URL"
        required
        maxlength={2048}
        hint="Where each event is POSTed, signed: a public https:// address."
      />
      <EventChoices
        form={form}
        scope="new"
        chosen={form ? valuesOf(form, "events") : ["message.created"]}
      />
      <fieldset aria-describedby={form?.errors.channel_ids ? `${channelsId}-error` : undefined}>
        <legend>Channels (none chosen: every channel you can see)</legend>
        <div class="checks">
          {p.channels.map((ch) => (
            <label>
              <input
                type="checkbox"
                name="channel_ids"
                value={ch.id}
                checked={chosen.includes(ch.id)}
              />{" "}
              #{ch.name}
            </label>
          ))}
        </div>
        <FieldError form={form} name="channel_ids" id={channelsId} />
      </fieldset>
      <SchemeField
        form={form}
        scope="new"
        initial="service"
        hint="Standard Webhooks' libraries verify its headers in any language (docs/webhooks.md)."
      />
      <button type="submit" class="primary">Create subscription</button>
    </PostForm>
  );
}

/** Sends a ping, or an event type's example, now; the page it leads to says how it went. */
export function TestForm(p: { sub: Subscription; csrf: string }) {
  const options = [
    { value: "ping", label: "ping" },
    ...EVENT_TYPES.map((e) => ({ value: e, label: `${e} (its example)` })),
  ];
  return (
    <PostForm
      action={`${SETTINGS}/webhooks/${p.sub.id}/test`}
      csrf={p.csrf}
      class="button-row"
      label="Send a test"
    >
      <SelectField scope="test" name="event_type" label="Event" options={options} />
      <button type="submit">Send test</button>
    </PostForm>
  );
}

/**
 * Where a subscription delivers and what it hears: its owner's to change, with the rules of the
 * API's PATCH (the same domain function).
 */
export function EditForm(props: { sub: Subscription; csrf: string; form?: FormState }) {
  const { sub, form } = props;
  const chosen = form ? valuesOf(form, "events") : sub.events;
  return (
    <PostForm
      action={`${SETTINGS}/webhooks/${sub.id}/edit`}
      csrf={props.csrf}
      class="card"
      label="Change where it delivers"
    >
      <FormMessage form={form} />
      <TextField
        form={form}
        scope="edit"
        name="url"
        label="URL"
        required
        initial={sub.url}
        maxlength={2048}
      />
      <EventChoices form={form} scope="edit" chosen={chosen} />
      <button type="submit" class="primary">Save</button>
    </PostForm>
  );
}

const SCHEMES = [
  { value: "service", label: "X-Service-Signature (ours)" },
  { value: "standard", label: "Standard Webhooks (webhook-id, webhook-signature)" },
  { value: "both", label: "Both" },
];

function SchemeField(
  p: { form?: FormState; scope: string; initial: SignatureScheme; hint?: string },
) {
  return (
    <SelectField
      form={p.form}
      scope={p.scope}
      name="signature_scheme"
      label="Signed with"
      options={SCHEMES}
      initial={p.initial}
      hint={p.hint}
    />
  );
}

/** How a subscription's deliveries are signed: anyone who manages it may choose. */
export function SchemeForm(p: { sub: Subscription; csrf: string; form?: FormState }) {
  return (
    <PostForm
      action={`${SETTINGS}/webhooks/${p.sub.id}/signature-scheme`}
      csrf={p.csrf}
      class="button-row"
      label="How it is signed"
    >
      <FormMessage form={p.form} />
      <SchemeField form={p.form} scope="scheme" initial={schemeOf(p.sub)} />
      <button type="submit">Sign this way</button>
    </PostForm>
  );
}
