import { createLoginLink } from "../domain/people/sessions.ts";
import { type Command, uuidFlag } from "./command.ts";

/** A way into the settings screen for a person: the link is the credential, so it works once. */
export const loginCommands: Record<string, Command> = {
  "login-link": {
    usage: "login-link --user <user id>",
    summary: "A one-time link, valid 15 minutes, that signs a person in to the settings screen.",
    async run(ctx, flags) {
      const { url } = await createLoginLink(ctx, uuidFlag(flags, "user"));
      return { url };
    },
  },
};
