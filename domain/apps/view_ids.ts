/**
 * Ids for what a view's app left unnamed (Slack does the same): a view's state and its presses
 * name blocks and elements by id, so one without would be an input nobody could submit.
 */
import type { Block } from "../../core/types.ts";
import { randomBase62 } from "../../core/random.ts";

/**
 * The blocks with an id on each, and on each element a person may use: where the app named none,
 * one is made up, as Slack does, shown in the view it is given back and named by the view's state
 * (an input without ids could not be submitted otherwise).
 */
export function withIds(blocks: Block[]): Block[] {
  return blocks.map((b) => {
    const named: Block = { ...b, block_id: b.block_id ?? randomBase62(5) };
    if (b.type === "input") named.element = withActionId(b.element);
    if (b.type === "actions") named.elements = (b.elements as unknown[]).map(withActionId);
    if (b.type === "section" && b.accessory) named.accessory = withActionId(b.accessory);
    return named;
  });
}

/** An element with its `action_id`, made up when it has none (an image takes no action). */
const withActionId = (element: unknown) => {
  const e = element as { type: string; action_id?: string };
  return e.type === "image" || e.action_id ? e : { ...e, action_id: randomBase62(5) };
};
