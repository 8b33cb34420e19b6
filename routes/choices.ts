import { z } from "zod";

const str = (what: string, max = 3_000) =>
  z.string({ error: `The ${what} must be a string.` }).max(max);
const ids = (what: string) =>
  z.array(str(what, 255), { error: `The ${what} must be a list of ids.` }).max(100);
const option = (what: string) =>
  z.object({ value: str(`${what}'s value`, 150), text: z.unknown().optional() }, {
    error: `The ${what} must be an object with a value.`,
  });

/** What a person typed into an external menu, as a query: which menu, and the text so far. */
export const suggestingQuery = z.object({
  action_id: z.string({ error: "The action_id is required." }).min(1).max(255),
  block_id: z.string().min(1).max(255).optional(),
  value: z.string().max(150).default(""),
});

/**
 * What a person chose with an element, in a press or a submission: Slack's state fields
 * (`selected_option`, `selected_date`, `selected_users`, ...), or `value` for a typed value or
 * a single choice. Checked against the element in domain/apps/element_values.ts.
 */
export const choice = {
  value: str("value").nullable().optional(),
  selected_option: option("selected_option").nullable().optional(),
  selected_options: z.array(option("selected_options"), {
    error: "The selected_options must be a list of options.",
  }).max(100).optional(),
  selected_date: str("selected_date", 10).nullable().optional(),
  selected_time: str("selected_time", 5).nullable().optional(),
  selected_user: str("selected_user", 255).nullable().optional(),
  selected_users: ids("selected_users").optional(),
  selected_conversation: str("selected_conversation", 255).nullable().optional(),
  selected_conversations: ids("selected_conversations").optional(),
  selected_channel: str("selected_channel", 255).nullable().optional(),
  selected_channels: ids("selected_channels").optional(),
};
