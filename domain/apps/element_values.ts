/**
 * What a person chose with an element, as Slack tells apps (decisions.md, "More of Block Kit"):
 * the one place that turns what a press or a submission gave into an action's or a view state's
 * fields (`value`, `selected_option`, `selected_date`, `selected_users`, ...), checked against the
 * element: an option it offers, a date, a number in its range, a user or conversation the person
 * sees. A press and a submission of the same element tell the app the same thing.
 */
import type { Ctx } from "../context.ts";
import type { Subject, User } from "../../core/types.ts";
import { invalid } from "../../core/errors.ts";
import { getAll } from "../../kv/store/commit.ts";
import { keys } from "../../kv/keys.ts";
import { visibleChannelIds } from "../channels/access.ts";
import type { Element } from "../messages/block_elements.ts";

/** What a person gave for one element: Slack's state fields, or `value` for a single choice. */
export interface Given {
  value?: string | null;
  selected_option?: { value: string; text?: unknown } | null;
  selected_options?: { value: string; text?: unknown }[];
  selected_date?: string | null;
  selected_time?: string | null;
  selected_user?: string | null;
  selected_users?: string[];
  selected_conversation?: string | null;
  selected_conversations?: string[];
  selected_channel?: string | null;
  selected_channels?: string[];
}

type Option = { text: unknown; value: string };
type Fields = Record<string, unknown>;

/** Where the choice is made, for the error's words and the visibility checks. */
export interface Choosing {
  ctx: Ctx;
  subject: Subject;
  /** What the 422 names: `values` for a submission, the press's own field otherwise. */
  field: string;
  /** How the element is named in an error: `block/action`. */
  name: string;
}

const offered = (e: { options?: Option[]; option_groups?: { options: Option[] }[] }) => [
  ...(e.options ?? []),
  ...(e.option_groups ?? []).flatMap((g) => g.options),
];

/** Whether the person chose nothing: an optional input left empty. */
export function isEmpty(given: Given): boolean {
  return Object.values(given).every((v) =>
    v === undefined || v === null || v === "" || (Array.isArray(v) && v.length === 0)
  );
}

/**
 * Slack's fields for what `given` chose with `element` (its `type` not included), or the 422
 * naming the element. Nothing given is Slack's empty value for it (`null`, or `[]`).
 */
export async function chosen(c: Choosing, element: Element, given: Given): Promise<Fields> {
  const fault = (why: string) => invalid(c.field, `${c.name}: ${why}`);
  const one = () => given.selected_option?.value ?? given.value ?? null;
  const many = () => given.selected_options?.map((o) => o.value) ?? [];
  switch (element.type) {
    case "button":
    case "icon_button":
      return { value: element.value, text: element.text };
    case "feedback_buttons": {
      // Which of its two buttons: Slack tells the app the value of the one pressed.
      const values = [element.positive_button.value, element.negative_button.value];
      const value = one();
      if (value === null || !values.includes(value)) {
        throw fault(`a feedback button's value is ${values.join(" or ")}.`);
      }
      return { value };
    }
    case "static_select":
    case "overflow":
    case "radio_buttons":
      return { selected_option: pick(offered(element), one(), fault) };
    case "multi_static_select":
    case "checkboxes": {
      const options = offered(element);
      const picked = many().map((v) => pick(options, v, fault)!);
      atMost(
        picked,
        "max_selected_items" in element ? element.max_selected_items : undefined,
        fault,
      );
      return { selected_options: picked };
    }
    case "external_select":
      return { selected_option: fromApp(given.selected_option ?? valueOption(given.value)) };
    case "multi_external_select":
      return { selected_options: (given.selected_options ?? []).map((o) => fromApp(o)) };
    case "users_select":
      return { selected_user: (await users(c, [given.selected_user ?? one()], fault))[0] };
    case "multi_users_select": {
      const picked = await users(c, given.selected_users ?? [], fault);
      atMost(picked, element.max_selected_items, fault);
      return { selected_users: picked };
    }
    case "conversations_select":
      return {
        selected_conversation: (await seen(c, [given.selected_conversation ?? one()], fault))[0],
      };
    case "channels_select":
      return { selected_channel: (await seen(c, [given.selected_channel ?? one()], fault))[0] };
    case "multi_conversations_select":
    case "multi_channels_select": {
      const wanted = element.type === "multi_channels_select"
        ? given.selected_channels
        : given.selected_conversations;
      const picked = await seen(c, wanted ?? [], fault);
      atMost(picked, element.max_selected_items, fault);
      return element.type === "multi_channels_select"
        ? { selected_channels: picked }
        : { selected_conversations: picked };
    }
    case "datepicker":
      return { selected_date: date(given.selected_date ?? given.value ?? null, fault) };
    case "timepicker":
      return { selected_time: time(given.selected_time ?? given.value ?? null, fault) };
    default:
      return typed(element, given.value ?? null, fault);
  }
}

/** What is typed into a text, email, URL or number input. */
function typed(element: Element, value: string | null, fault: (why: string) => Error): Fields {
  if (value === null || value === "") return { value: null };
  if (value.length > 3_000) throw fault("at most 3000 characters.");
  switch (element.type) {
    case "plain_text_input":
      if (element.min_length !== undefined && value.length < element.min_length) {
        throw fault(`at least ${element.min_length} characters.`);
      }
      if (element.max_length !== undefined && value.length > element.max_length) {
        throw fault(`at most ${element.max_length} characters.`);
      }
      return { value };
    case "email_text_input":
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) throw fault("an email address.");
      return { value };
    case "url_text_input":
      if (!URL.canParse(value) || !/^https?:/i.test(value)) throw fault("an http(s) URL.");
      return { value };
    case "number_input":
      return { value: number(element, value, fault) };
    default:
      return { value };
  }
}

function number(
  element: { is_decimal_allowed: boolean; min_value?: string; max_value?: string },
  value: string,
  fault: (why: string) => Error,
): string {
  const pattern = element.is_decimal_allowed ? /^-?\d+(\.\d+)?$/ : /^-?\d+$/;
  if (!pattern.test(value)) {
    throw fault(element.is_decimal_allowed ? "a number." : "a whole number.");
  }
  const n = Number(value);
  if (element.min_value !== undefined && n < Number(element.min_value)) {
    throw fault(`at least ${element.min_value}.`);
  }
  if (element.max_value !== undefined && n > Number(element.max_value)) {
    throw fault(`at most ${element.max_value}.`);
  }
  return value;
}

function pick(options: Option[], value: string | null, fault: (why: string) => Error) {
  if (value === null) return null;
  const option = options.find((o) => o.value === value);
  if (!option) throw fault(`no option has the value ${JSON.stringify(value)}.`);
  return option;
}

function atMost(picked: unknown[], max: number | undefined, fault: (why: string) => Error) {
  if (max !== undefined && picked.length > max) throw fault(`at most ${max} may be chosen.`);
}

/** An option the app offered (block_suggestion): taken as given, its text defaulted. */
const fromApp = (o: { value: string; text?: unknown } | null) =>
  o && { text: o.text ?? { type: "plain_text", text: o.value }, value: o.value };
const valueOption = (value: string | null | undefined) =>
  value === undefined || value === null ? null : { value };

function date(value: string | null, fault: (why: string) => Error) {
  if (value === null || value === "") return null;
  const ok = /^\d{4}-\d{2}-\d{2}$/.test(value) &&
    new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);
  if (!ok) throw fault("a date as YYYY-MM-DD.");
  return value;
}

function time(value: string | null, fault: (why: string) => Error) {
  if (value === null || value === "") return null;
  if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(value)) throw fault("a time as HH:mm.");
  return value;
}

/** People of the person's team (bots too, as Slack lists them); anyone else is unknown. */
async function users(c: Choosing, ids: (string | null)[], fault: (why: string) => Error) {
  const wanted = ids.filter((id): id is string => id !== null && id !== "");
  if (wanted.length === 0) return ids.length === 1 ? [null] : [];
  if (wanted.length > 100) throw fault("at most 100 may be chosen.");
  const found = await getAll<User>(c.ctx.kv, wanted.map((id) => keys.user(id)));
  found.forEach(({ value }, i) => {
    if (!value || value.team_id !== c.subject.team_id) {
      throw fault(`no such user ${JSON.stringify(wanted[i])}.`);
    }
  });
  return wanted;
}

/** Conversations the person sees now; any other is unknown, as a 404 would say. */
async function seen(c: Choosing, ids: (string | null)[], fault: (why: string) => Error) {
  const wanted = ids.filter((id): id is string => id !== null && id !== "");
  if (wanted.length === 0) return ids.length === 1 ? [null] : [];
  if (wanted.length > 100) throw fault("at most 100 may be chosen.");
  const visible = await visibleChannelIds(c.ctx, c.subject, wanted);
  const unknown = wanted.find((id) => !visible.has(id));
  if (unknown) throw fault(`no such conversation ${JSON.stringify(unknown)}.`);
  return wanted;
}
