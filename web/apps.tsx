import type { App, AppInstall, SocketStatus } from "../core/app_records.ts";
import type { Delivery } from "../core/webhook_records.ts";
import { ActionButton, Notice, Table, Time } from "./forms.tsx";
import { Layout, type Viewer } from "./layout.tsx";
import { SETTINGS } from "./paths.ts";

/** An install as the page shows it: its app (null once deleted), people named, what it was sent. */
export interface ShownInstall {
  install: AppInstall;
  app: App | null;
  botName: string;
  installedBy: string;
  deliveries: Delivery[];
  /** For an app in Socket Mode: its connections and backlog, in place of request URLs. */
  socket: SocketStatus | null;
}

const listens = (app: App | null) =>
  !!app && (!!app.slash_commands?.length || !!app.event_subscriptions ||
    !!app.interactivity?.is_enabled);

/** The apps installed into the team, and a way to take each out: admins and owners only. */
export function AppsPage(p: { viewer: Viewer; installs: ShownInstall[]; notice?: string }) {
  const live = p.installs.filter((i) => !i.install.uninstalled_at);
  return (
    <Layout title="Apps" viewer={p.viewer} current="apps">
      <Notice text={p.notice} />
      <p>
        An app joins the team through its own install link, approved by an admin or owner. It acts
        as a bot of its own, with the scopes approved then, in the channels its bot is added to.
      </p>
      {live.length === 0
        ? <p class="muted">No app is installed.</p>
        : (
          <Table columns={["App", "Its bot", "Scopes", "Installed"]} actions>
            {live.map((shown) => <InstallRow shown={shown} csrf={p.viewer.csrf} />)}
          </Table>
        )}
      {live.filter((s) => listens(s.app)).map((s) => <Wiring shown={s} />)}
    </Layout>
  );
}

function InstallRow({ shown, csrf }: { shown: ShownInstall; csrf: string }) {
  const { install, botName, installedBy } = shown;
  const appName = shown.app?.name ?? "a deleted app";
  return (
    <tr data-app-id={install.app_id}>
      <th scope="row">{appName}</th>
      <td data-label="Its bot">{botName}</td>
      <td data-label="Scopes">
        <ul class="scopes">{install.scopes.map((s) => <li>{s}</li>)}</ul>
      </td>
      <td data-label="Installed">
        <Time at={install.installed_at} /> by {installedBy}
      </td>
      <td class="actions">
        <ActionButton
          action={`${SETTINGS}/apps/${install.app_id}/uninstall`}
          csrf={csrf}
          label="Uninstall"
          danger
          title={`Uninstall ${appName}`}
          confirm={`Uninstall “${appName}”? Its token, bot, commands and incoming webhooks stop working at once.`}
        />
      </td>
    </tr>
  );
}

/** What an app that listens answers (its commands, events, buttons), where, and lately how. */
function Wiring({ shown }: { shown: ShownInstall }) {
  const app = shown.app!;
  const commands = shown.install.scopes.includes("commands") ? app.slash_commands ?? [] : [];
  return (
    <section class="app-wiring" data-app-id={app.id}>
      <h2>{app.name}: what it answers</h2>
      <dl>
        {commands.map((c) => (
          <>
            <dt>
              <code>{c.command}</code> {c.usage_hint}
            </dt>
            <dd>
              {c.description} → <Where url={c.url} />
            </dd>
          </>
        ))}
        {app.event_subscriptions && (
          <>
            <dt>Events ({app.event_subscriptions.bot_events.join(", ")})</dt>
            <dd>
              <Where url={app.event_subscriptions.request_url} />
            </dd>
          </>
        )}
        <AgentLines app={app} />
        {app.interactivity?.is_enabled && (
          <>
            <dt>Buttons and forms</dt>
            <dd>
              <Where url={app.interactivity.request_url} />
            </dd>
          </>
        )}
      </dl>
      {shown.socket
        ? <SocketLine status={shown.socket} />
        : shown.deliveries.length === 0
        ? <p class="muted">No event sent to it yet.</p>
        : <RecentDeliveries deliveries={shown.deliveries} />}
    </section>
  );
}

/** What an agent shows people (its view, its first prompts) and the metadata it hears of. */
function AgentLines({ app }: { app: NonNullable<ShownInstall["app"]> }) {
  const view = app.agent_view ?? app.assistant_view;
  const metadata = app.metadata_subscriptions ?? [];
  return (
    <>
      {view && (
        <>
          <dt>Agent ({app.agent_view ? "agent_view" : "assistant_view"})</dt>
          <dd>
            {view.description}
            {view.suggested_prompts.length > 0 &&
              ` Suggests: ${view.suggested_prompts.map((p) => p.title).join(", ")}.`}
          </dd>
        </>
      )}
      {metadata.length > 0 && (
        <>
          <dt>Message metadata</dt>
          <dd>
            {metadata.map((m) => `${m.event_type} from ${m.app_id === "*" ? "any app" : m.app_id}`)
              .join("; ")}
          </dd>
        </>
      )}
    </>
  );
}

/** Where a request goes: its URL, or (none, in Socket Mode) the app's connections. */
const Where = ({ url }: { url: string | null }) =>
  url ? <code>{url}</code> : <span>its Socket Mode connection</span>;

/** How an app in Socket Mode stands: connected or away, and what waits for it. */
function SocketLine({ status }: { status: SocketStatus }) {
  const open = status.connections.reduce((n, c) => n + c.connections, 0);
  const age = status.oldest_pending_age_seconds;
  return (
    <p class={open > 0 ? "socket ok" : "socket bad"}>
      {open > 0 ? `Connected (${open} connection${open === 1 ? "" : "s"})` : "Not connected"};{" "}
      {status.backlog === 0
        ? "nothing waits for it."
        : `${status.backlog} event${status.backlog === 1 ? "" : "s"} wait for it, the oldest for ${
          Math.round((age ?? 0) / 60)
        } min.`}
      {status.dropped > 0 && ` ${status.dropped} were dropped past its backlog's bound.`}
    </p>
  );
}

function RecentDeliveries({ deliveries }: { deliveries: Delivery[] }) {
  return (
    <Table columns={["When", "Event", "Status code", "Result"]} class="deliveries">
      {deliveries.map((d) => (
        <tr data-delivery-id={d.id} class={d.succeeded ? "ok" : "bad"}>
          <td data-label="When">
            <Time at={d.created_at} />
          </td>
          <td data-label="Event">{d.event_type}</td>
          <td data-label="Status code" class="num">{d.response_status ?? "—"}</td>
          <td data-label="Result">
            {d.succeeded ? <span class="badge ok">ok</span> : (d.error ?? "failed")}
          </td>
        </tr>
      ))}
    </Table>
  );
}
