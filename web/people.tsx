import type { Role, User } from "../core/types.ts";
import { isActive } from "../core/active.ts";
import { ActionButton, FormMessage, type FormState, Notice, PostForm, Table } from "./forms.tsx";
import { Layout, type Viewer } from "./layout.tsx";
import { SETTINGS } from "./paths.ts";

export interface PeoplePageProps {
  viewer: Viewer;
  people: User[];
  /** What the viewer may do to each, as the policy answers: by user id. */
  may: Record<string, { deactivate: boolean; role: boolean }>;
  /** A refused action, shown above the table. */
  form?: FormState;
  notice?: string;
}

const ROLE_LABELS: Record<Role, string> = { member: "Member", admin: "Admin", owner: "Owner" };

/** The team's people and bots: deactivate and reactivate them, and (owners) change roles. */
export function PeoplePage(p: PeoplePageProps) {
  return (
    <Layout title="People" viewer={p.viewer} current="people">
      <Notice text={p.notice} />
      <FormMessage form={p.form} />
      <p>
        Deactivating someone ends at once everything that acts for them: their tokens, sessions,
        event streams and subscriptions, and a bot's incoming webhooks. Their messages stay.
        Reactivating lets them sign in and be given tokens again; nothing old comes back.
      </p>
      <Table columns={["Name", "Kind", "Role", "Status"]} actions>
        {p.people.map((u) => (
          <tr data-user-id={u.id}>
            <td>{u.name}</td>
            <td>{u.type === "bot" ? "Bot" : "Person"}</td>
            <td>{u.role ? ROLE_LABELS[u.role] : "—"}</td>
            <td>{isActive(u) ? "Active" : "Deactivated"}</td>
            <td class="actions">
              {p.may[u.id]?.role && isActive(u) && <RoleForm user={u} csrf={p.viewer.csrf} />}
              {p.may[u.id]?.deactivate && (!isActive(u)
                ? (
                  <ActionButton
                    action={`${SETTINGS}/people/${u.id}/reactivate`}
                    csrf={p.viewer.csrf}
                    label={`Reactivate ${u.name}`}
                  />
                )
                : (
                  <ActionButton
                    action={`${SETTINGS}/people/${u.id}/deactivate`}
                    csrf={p.viewer.csrf}
                    label={`Deactivate ${u.name}`}
                    danger
                    confirm={`Deactivate ${u.name}? Their tokens and sessions end now.`}
                  />
                ))}
            </td>
          </tr>
        ))}
      </Table>
    </Layout>
  );
}

function RoleForm(props: { user: User; csrf: string }) {
  const id = `role-${props.user.id}`;
  return (
    <PostForm action={`${SETTINGS}/people/${props.user.id}/role`} csrf={props.csrf} class="inline">
      <label for={id} class="visually-hidden">Role of {props.user.name}</label>
      <select id={id} name="role">
        {(Object.keys(ROLE_LABELS) as Role[]).map((r) => (
          <option value={r} selected={r === props.user.role}>{ROLE_LABELS[r]}</option>
        ))}
      </select>
      <button type="submit">Change role</button>
    </PostForm>
  );
}
