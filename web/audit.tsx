import type { NamedAuditEntry } from "../core/types.ts";
import { Table, Time } from "./forms.tsx";
import { Layout, type Viewer } from "./layout.tsx";
import { SETTINGS } from "./paths.ts";

export interface AuditPageProps {
  viewer: Viewer;
  /** Each with who acted and what it acted on, named. */
  entries: NamedAuditEntry[];
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
                <td data-label="When">
                  <Time at={e.created_at} />
                </td>
                <td data-label="Action">
                  <code>{e.action}</code>
                </td>
                <td data-label="Actor">
                  {e.actor_id === null ? <span class="muted">{e.actor_name}</span> : e.actor_name}
                </td>
                <td data-label="Target">
                  {e.target_name && <span class="target">{e.target_name}</span>}
                  <code class="muted id">{e.target_id}</code>
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
