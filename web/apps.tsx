import type { AppInstall } from "../core/types.ts";
import { ActionButton, Notice, Table, Time } from "./forms.tsx";
import { Layout, type Viewer } from "./layout.tsx";
import { SETTINGS } from "./paths.ts";

/** An install as the page shows it, its app and people named. */
export interface ShownInstall {
  install: AppInstall;
  appName: string;
  botName: string;
  installedBy: string;
}

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
            {live.map(({ install, appName, botName, installedBy }) => (
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
                    csrf={p.viewer.csrf}
                    label="Uninstall"
                    danger
                    title={`Uninstall ${appName}`}
                    confirm={`Uninstall “${appName}”? Its token, bot and incoming webhooks stop working at once.`}
                  />
                </td>
              </tr>
            ))}
          </Table>
        )}
    </Layout>
  );
}
