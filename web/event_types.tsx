import type { Subscription } from "../core/webhook_records.ts";
import { PostForm, SelectField } from "./forms.tsx";
import { Layout, type Viewer } from "./layout.tsx";
import { SETTINGS } from "./paths.ts";

/** One type as the catalog (GET /api/v1/event-types) gives it. */
export interface EventTypeEntry {
  type: string;
  description: string;
  schema: unknown;
  example: unknown;
  added_in: string;
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

/** A description as the catalog writes it, Markdown's `code` spans shown as code. */
const Described = ({ text }: { text: string }) => (
  <>{text.split("`").map((part, i) => i % 2 === 1 ? <code>{part}</code> : part)}</>
);

/** Delivers one type's example to a subscription the viewer picks; the page it leads to says how. */
function SendExample(p: { type: string; subs: Subscription[]; csrf: string }) {
  const active = p.subs.filter((s) => s.status === "active");
  if (active.length === 0) {
    return <p class="muted">Make an active subscription to send this example to one.</p>;
  }
  return (
    <PostForm
      action={`${SETTINGS}/event-types`}
      csrf={p.csrf}
      class="button-row"
      label={`Send a ${p.type} example`}
    >
      <input type="hidden" name="event_type" value={p.type} />
      <SelectField
        scope={`example-${p.type}`}
        name="subscription"
        label="To"
        options={active.map((s) => ({ value: s.id, label: `${s.name} (${s.url})` }))}
      />
      <button type="submit">Send example</button>
    </PostForm>
  );
}

/**
 * The event catalog: each type a subscription can be sent, what it means, the release it came in,
 * an example and its JSON Schema, and a way to deliver the example as a test.
 */
export function EventTypesPage(
  p: { viewer: Viewer; catalog: EventTypeEntry[]; subs: Subscription[] },
) {
  return (
    <Layout title="Event types" viewer={p.viewer} current="webhooks">
      <p>
        What a subscription can be sent. The API serves the same catalog (
        <code>GET /api/v1/event-types</code>), each type's JSON Schema included, so a receiver can
        check what it gets or generate types from it.
      </p>
      {p.catalog.map((e) => (
        <details class="card" data-event-type={e.type}>
          <summary>
            <code>{e.type}</code> <Described text={e.description} />{" "}
            <span class="muted">Since {e.added_in}.</span>
          </summary>
          <h3>Example</h3>
          <pre>{pretty(e.example)}</pre>
          <SendExample type={e.type} subs={p.subs} csrf={p.viewer.csrf} />
          <details>
            <summary>JSON Schema (2020-12) of the whole body</summary>
            <pre>{pretty(e.schema)}</pre>
          </details>
        </details>
      ))}
    </Layout>
  );
}
