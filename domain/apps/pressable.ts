/**
 * The elements of blocks a person may press or pick from, wherever blocks are shown (a message, a
 * modal, a Home): those of `actions` blocks, sections' accessories, and in a view the inputs that
 * dispatch their actions (`dispatch_action`). A press names one by `action_id` (and `block_id`),
 * as the blocks are now, so it can't be forged or replayed against changed blocks; what it chose
 * is told to the app as Slack's `block_actions` tells it (domain/apps/element_values.ts).
 */
import type { Block, Subject } from "../../core/types.ts";
import type { Ctx } from "../context.ts";
import { invalid } from "../../core/errors.ts";
import { tsOfMs } from "../../core/ids.ts";
import { pressableElements } from "../messages/blocks.ts";
import { chosen, type Given, isEmpty } from "./element_values.ts";

/** What a person pressed: an element by its `action_id` (and `block_id`), with what it chose. */
export interface Press extends Given {
  action_id: string;
  block_id?: string;
}

const notThere = (what: string) =>
  invalid("action_id", `The ${what} has no such element now: it may have changed.`);

/**
 * The action Slack's `block_actions` carries for a press of one of `blocks`' elements, checked
 * against the element; 422 when it is not there or the choice is not one it offers.
 */
export async function pressOf(
  ctx: Ctx,
  { subject, blocks, press, where }: {
    subject: Subject;
    blocks: Block[];
    press: Press;
    /** What holds the blocks, for the error: "message", "view". */
    where: string;
  },
) {
  const found = pressableElements(blocks).find((f) =>
    f.element.action_id === press.action_id && (!press.block_id || f.blockId === press.block_id)
  );
  if (!found) throw notThere(where);
  const { element } = found;
  if (element.type === "button") {
    if (press.value !== undefined && press.value !== (element.value ?? "")) throw notThere(where);
  } else if (isEmpty(choiceOf(press))) {
    throw invalid(fieldOf(press), "Say what was chosen: the value, or Slack's selected_* field.");
  }
  const fields = await chosen(
    { ctx, subject, field: fieldOf(press), name: `${found.blockId}/${press.action_id}` },
    element,
    choiceOf(press),
  );
  return {
    type: element.type,
    action_id: press.action_id,
    block_id: found.blockId,
    ...fields,
    action_ts: tsOfMs(Date.now()),
  };
}

const choiceOf = ({ action_id: _a, block_id: _b, ...given }: Press): Given => given;

/** The field of the press a refused choice is named on. */
function fieldOf(press: Press): string {
  const named = Object.keys(press).find((k) => k.startsWith("selected_"));
  return named ?? "value";
}
