import type { Channel } from "../core/types.ts";
import type { Delivery, Subscription } from "../core/webhook_records.ts";
import { ActionButton, type FormState, Notice, Revealed, Table, Time } from "./forms.tsx";
import { Layout, type Viewer } from "./layout.tsx";
import { EditForm, NewWebhookForm, SchemeForm, TestForm } from "./webhook_forms.tsx";
import { SETTINGS } from "./paths.ts";

function Status({ sub }: { sub: Subscription }) {
  return sub.status === "active"
    ? <span class="badge ok">active</span>
    : <span class="badge bad">disabled</span>;
}

/** The team's outgoing subscriptions: admins and owners only. */
export function WebhooksPage(
  p: {
    viewer: Viewer;
    subs: Subscription[];
    channels: Channel[];
    form?: FormState;
    notice?: string;
  },
) {
  return (
    <Layout title="Outgoing webhooks" viewer={p.viewer} current="webhooks">
      <Notice text={p.notice} />
      <p>
        A subscription POSTs each event it hears, signed, to its URL. Make one here or through the
        API (<code>POST /api/v1/webhooks</code>); see how each fares, test it and put it right. What
        each event means and carries:{" "}
        <a href={`${SETTINGS}/event-types`}>
          Event types
        </a>.
      </p>
      {p.subs.length === 0
        ? <p class="muted">This team has no subscriptions.</p>
        : (
          <Table columns={["Name", "Status", "Failures in a row", "Last success", "URL"]}>
            {p.subs.map((s) => (
              <tr data-subscription-id={s.id}>
                <th scope="row">
                  <a href={`${SETTINGS}/webhooks/${s.id}`}>{s.name}</a>
                </th>
                <td data-label="Status">
                  <Status sub={s} />
                </td>
                <td data-label="Failures in a row" class="num">{s.consecutive_failures}</td>
                <td data-label="Last success">
                  <Time at={s.last_success_at} />
                </td>
                <td data-label="URL" class="url">{s.url}</td>
              </tr>
            ))}
          </Table>
        )}
      <h2>New subscription</h2>
      <NewWebhookForm csrf={p.viewer.csrf} channels={p.channels} form={p.form} />
    </Layout>
  );
}

/** The start of a receiver's answer, as a row has room for (the API gives up to 1 KiB). */
const clipped = (text: string) =>
  text.length > ANSWER_CHARS ? `${text.slice(0, ANSWER_CHARS)}…` : text;
const ANSWER_CHARS = 160;

function DeliveryRows(p: { sub: Subscription; deliveries: Delivery[]; csrf: string }) {
  return (
    <>
      {p.deliveries.map((d) => (
        <tr data-delivery-id={d.id} class={d.succeeded ? "ok" : "bad"}>
          <td data-label="When">
            <Time at={d.created_at} />
          </td>
          <td data-label="Event">
            {d.event_type}
            <br />
            <code class="muted">{d.event_id}</code>
          </td>
          <td data-label="Status code" class="num">{d.response_status ?? "—"}</td>
          <td data-label="Result">
            {d.succeeded ? <span class="badge ok">ok</span> : (d.error ?? "failed")}
            {!d.succeeded && d.attempt !== null && (
              <>
                <br />
                <span class="muted">
                  attempt {d.attempt}
                  {d.next_attempt_at
                    ? (
                      <>
                        , next try <Time at={d.next_attempt_at} />
                      </>
                    )
                    : d.next_attempt_at === null && ", no further try"}
                </span>
              </>
            )}
            {!d.succeeded && d.response_body && (
              <>
                <br />
                <code class="muted">{clipped(d.response_body)}</code>
              </>
            )}
          </td>
          <td data-label="Duration" class="num">
            {d.duration_ms === undefined ? "—" : `${d.duration_ms} ms`}
          </td>
          <td>
            {p.sub.status === "active" && (
              <ActionButton
                action={`${SETTINGS}/webhooks/${p.sub.id}/deliveries/${d.id}/redeliver`}
                csrf={p.csrf}
                label="Redeliver"
              />
            )}
          </td>
        </tr>
      ))}
    </>
  );
}

/** How many of the latest deliveries show before the rest fold away: a phone's screenful. */
const UNFOLDED_DELIVERIES = 5;

function DeliveryTable(p: { sub: Subscription; deliveries: Delivery[]; csrf: string }) {
  return (
    <Table
      columns={["When", "Event", "Status code", "Result", "Duration"]}
      actions
      class="deliveries"
    >
      <DeliveryRows {...p} />
    </Table>
  );
}

/** The latest deliveries, and the earlier ones folded under them. */
function Deliveries(p: { sub: Subscription; deliveries: Delivery[]; csrf: string }) {
  const latest = p.deliveries.slice(0, UNFOLDED_DELIVERIES);
  const earlier = p.deliveries.slice(UNFOLDED_DELIVERIES);
  return (
    <>
      <DeliveryTable {...p} deliveries={latest} />
      {earlier.length > 0 && (
        <details class="earlier">
          <summary>
            {earlier.length} earlier {earlier.length === 1 ? "delivery" : "deliveries"}
          </summary>
          <DeliveryTable {...p} deliveries={earlier} />
        </details>
      )}
    </>
  );
}

export interface WebhookPageProps {
  viewer: Viewer;
  sub: Subscription;
  /** The edit form, when it comes back with errors. */
  edit?: FormState;
  /** The signature scheme's form, when it comes back with errors. */
  scheme?: FormState;
  /** Who made it: it hears only what that user can see. */
  owner: string | null;
  /** Whether the viewer may change where it delivers (the policy's "subscription.retarget"). */
  canRetarget: boolean;
  /** Names of its channels that the viewer can see. */
  channelNames: Map<string, string>;
  deliveries: Delivery[];
  revealed?: { label: string; value: string; note?: string };
  notice?: string;
}

/** What a subscription is and how it fares. */
function Facts(p: WebhookPageProps) {
  const { sub } = p;
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        <Status sub={sub} />
        {sub.disabled_at && (
          <>
            {" "}since <Time at={sub.disabled_at} />
          </>
        )}
      </dd>
      <dt>Failures in a row</dt>
      <dd>{sub.consecutive_failures}</dd>
      <dt>Last success</dt>
      <dd>
        <Time at={sub.last_success_at} />
      </dd>
      <dt>URL</dt>
      <dd class="url">{sub.url}</dd>
      <dt>Events</dt>
      <dd>{sub.events.join(", ")}</dd>
      <dt>Channels</dt>
      <dd>
        {sub.channel_ids
          ? sub.channel_ids.map((id) => {
            const name = p.channelNames.get(id);
            return name ? `#${name}` : "a channel you can't see";
          }).join(", ")
          : "every channel its owner can see"}
      </dd>
      <dt>Owner</dt>
      <dd>{p.owner ?? "unknown"} (it hears only what its owner can see)</dd>
    </dl>
  );
}

/** One subscription: its state, its latest attempts, and what can be done about them. */
export function WebhookPage(p: WebhookPageProps) {
  const { sub, viewer } = p;
  const base = `${SETTINGS}/webhooks/${sub.id}`;
  return (
    <Layout
      title={sub.name}
      viewer={viewer}
      current="webhooks"
      canonical={p.revealed ? base : undefined}
    >
      <p>
        <a href={`${SETTINGS}/webhooks`}>← All outgoing webhooks</a>
      </p>
      <Notice text={p.notice} />
      {p.revealed && <Revealed {...p.revealed} />}
      <Facts {...p} />
      <div class="button-row">
        {sub.status === "disabled" && (
          <ActionButton action={`${base}/enable`} csrf={viewer.csrf} label="Re-enable" />
        )}
        <ActionButton action={`${base}/rotate-secret`} csrf={viewer.csrf} label="Rotate secret" />
        <ActionButton
          action={`${base}/delete`}
          csrf={viewer.csrf}
          label="Delete subscription"
          danger
          confirm={`Delete “${sub.name}” and its delivery history? Nothing more will be sent to it.`}
        />
      </div>
      {sub.status === "active" && <TestForm sub={sub} csrf={viewer.csrf} />}
      <SchemeForm sub={sub} csrf={viewer.csrf} form={p.scheme} />
      <h2>Where it delivers</h2>
      {p.canRetarget ? <EditForm sub={sub} csrf={viewer.csrf} form={p.edit} /> : (
        <p class="muted">
          Only its owner{p.owner ? `, ${p.owner},` : ""}{" "}
          can change its URL and events: it delivers what the owner can see, so it goes where the
          owner chose.
        </p>
      )}
      <h2>Latest deliveries</h2>
      {sub.status === "disabled" && p.deliveries.length > 0 && (
        <p class="muted">
          A disabled subscription sends nothing, so there is no Redeliver: re-enable it first.
        </p>
      )}
      {p.deliveries.length === 0
        ? <p class="muted">Nothing was sent yet.</p>
        : <Deliveries sub={sub} deliveries={p.deliveries} csrf={viewer.csrf} />}
    </Layout>
  );
}
