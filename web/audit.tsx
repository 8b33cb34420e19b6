import type { AuditEntry } from "../core/types.ts";
import { Table, Time } from "./forms.tsx";
import { Layout, type Viewer } from "./layout.tsx";
import { SETTINGS } from "./paths.ts";

export interface AuditPageProps {
  viewer: Viewer;
  entries: AuditEntry[];
  /** Actors' names by id. */
  names: Map<string, string>;
  /** The cursor of the next (older) page, if there is one. */
  before: string | null;
  /** Whether this is a later page (so there is a way back to the newest). */
  paged: boolean;
}

/** The team's audit log, newest first: admins and owners only. */
export function AuditPage(p: AuditPageProps) {
  return (
    <Layout title="Audit log" viewer={p.viewer} current="audit">
      {p.entries.length === 0
        ? <p class="muted">Nothing happened yet.</p>
        : (
          <Table columns={["When", "Action", "Actor", "Target"]} class="audit">
            {p.entries.map((e) => (
              <tr data-audit-id={e.id}>
                <td>
                  <Time at={e.created_at} />
                </td>
                <td>
                  <code>{e.action}</code>
                </td>
                <td>
                  {e.actor_id === null
                    ? <span class="muted">system</span>
                    : (p.names.get(e.actor_id) ?? e.actor_id)}
                </td>
                <td>
                  <code>{e.target_id}</code>
                </td>
              </tr>
            ))}
          </Table>
        )}
      <nav class="pager" aria-label="Pages">
        {p.paged && <a href={`${SETTINGS}/audit`}>Newest</a>}
        {p.before && (
          <a href={`${SETTINGS}/audit?before=${p.before}`} rel="next">
            Older entries
          </a>
        )}
      </nav>
    </Layout>
  );
}
