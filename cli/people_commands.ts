import { changeRole, deactivateUser, reactivateUser } from "../domain/people/people.ts";
import { type Role, ROLES } from "../core/types.ts";
import { choiceFlag, type Command, requiredFlag, uuidFlag } from "./command.ts";

/** People who leave and roles that change (decisions.md, "Authority over time"). */
export const peopleCommands: Record<string, Command> = {
  "user:deactivate": {
    usage: "user:deactivate --id <user id>",
    summary:
      "Stops a person or bot: its tokens, sessions and webhooks stop working; memberships stay.",
    async run(ctx, flags) {
      const user = await deactivateUser(ctx, null, uuidFlag(flags, "id"));
      return { id: user.id, deactivated_at: user.deactivated_at };
    },
  },
  "user:reactivate": {
    usage: "user:reactivate --id <user id>",
    summary: "Lets a deactivated person or bot back in (its old tokens stay revoked).",
    async run(ctx, flags) {
      const user = await reactivateUser(ctx, null, uuidFlag(flags, "id"));
      return { id: user.id };
    },
  },
  "user:role": {
    usage: "user:role --id <user id> --role member|admin|owner",
    summary: "Changes a person's role; the change holds on every instance at once.",
    async run(ctx, flags) {
      const role = choiceFlag(flags, "role", ROLES, requiredFlag(flags, "role") as Role);
      const { user, previous } = await changeRole(ctx, null, uuidFlag(flags, "id"), role);
      return { id: user.id, role: user.role, previous_role: previous };
    },
  },
};
