import type { Child } from "hono/jsx";
import type { FieldErrors } from "../core/errors.ts";

/** What a form showed when it comes back with errors: the input as typed, the messages. */
export interface FormState {
  values: Record<string, string | string[]>;
  errors: FieldErrors;
  message?: string;
}

export const valueOf = (form: FormState | undefined, name: string): string => {
  const v = form?.values[name];
  return typeof v === "string" ? v : "";
};

export const valuesOf = (form: FormState | undefined, name: string): string[] => {
  const v = form?.values[name];
  return Array.isArray(v) ? v : typeof v === "string" ? [v] : [];
};

/** A POST form carrying the session's CSRF token. */
export function PostForm(
  props: { action: string; csrf: string; class?: string; label?: string; children?: Child },
) {
  return (
    <form method="post" action={props.action} class={props.class} aria-label={props.label}>
      <input type="hidden" name="_csrf" value={props.csrf} />
      {props.children}
    </form>
  );
}

/** A one-button POST form, for actions on a row. */
export function ActionButton(
  props: {
    action: string;
    csrf: string;
    label: string;
    danger?: boolean;
    title?: string;
    /** Asked before an action that can't be undone, where scripts run. */
    confirm?: string;
  },
) {
  return (
    <PostForm action={props.action} csrf={props.csrf} class="inline">
      <button
        type="submit"
        class={props.danger ? "danger" : undefined}
        title={props.title}
        data-confirm={props.confirm}
      >
        {props.label}
      </button>
    </PostForm>
  );
}

/**
 * A control's id: `scope` tells apart the forms of one page (the bots page has one per bot), so
 * every label and error message points at its own control.
 */
export const controlId = (scope: string, name: string) => `${scope}-${name}`;

/** What a control says is wrong: its field's messages, or those of the fields it stands for. */
const messagesOf = (form: FormState | undefined, name: string | string[]) =>
  [name].flat().flatMap((n) => form?.errors[n] ?? []);

/** The messages of one field, tied to its control by id. */
export function FieldError(props: { form?: FormState; name: string | string[]; id: string }) {
  const messages = messagesOf(props.form, props.name);
  if (!messages.length) return null;
  return <p class="field-error" id={`${props.id}-error`}>{messages.join(" ")}</p>;
}

/** The attributes that tie a control to its error message. */
export const errorAttrs = (form: FormState | undefined, name: string | string[], id: string) =>
  messagesOf(form, name).length
    ? { "aria-invalid": "true", "aria-describedby": `${id}-error` }
    : {};

/** A labelled one-line text input that keeps what was typed. */
export function TextField(
  props: {
    form?: FormState;
    scope: string;
    name: string;
    label: string;
    required?: boolean;
    placeholder?: string;
    hint?: string;
    /** Shown when the form is new (an edit form starts from what is stored). */
    initial?: string;
    maxlength?: number;
  },
) {
  const id = controlId(props.scope, props.name);
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.hint && <p class="hint">{props.hint}</p>}
      <input
        id={id}
        name={props.name}
        type="text"
        value={props.form ? valueOf(props.form, props.name) : props.initial ?? ""}
        required={props.required}
        maxlength={props.maxlength ?? 255}
        placeholder={props.placeholder}
        {...errorAttrs(props.form, props.name, id)}
      />
      <FieldError form={props.form} name={props.name} id={id} />
    </div>
  );
}

/** A select that keeps what was chosen. */
export function SelectField(
  props: {
    form?: FormState;
    scope: string;
    name: string;
    label: string;
    options: { value: string; label: string }[];
    hint?: string;
    /** Other fields the domain may name for what this control chose (the user it adds, say). */
    alsoErrorsOf?: string[];
    /** Chosen when no form was sent back. */
    initial?: string;
  },
) {
  const id = controlId(props.scope, props.name);
  const chosen = props.form ? valueOf(props.form, props.name) : props.initial ?? "";
  const names = [props.name, ...props.alsoErrorsOf ?? []];
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.hint && <p class="hint">{props.hint}</p>}
      <select id={id} name={props.name} {...errorAttrs(props.form, names, id)}>
        {props.options.map((o) => (
          <option value={o.value} selected={o.value === chosen}>
            {o.label}
          </option>
        ))}
      </select>
      <FieldError form={props.form} name={names} id={id} />
    </div>
  );
}

/** The form's own message (an error not about one field), if any. */
export function FormMessage(props: { form?: FormState }) {
  return props.form?.message ? <p class="form-error" role="alert">{props.form.message}</p> : null;
}

/** A confirmation after an action, shown at the top of the page it leads back to. */
export function Notice(props: { text?: string }) {
  return props.text ? <p class="notice" role="status">{props.text}</p> : null;
}

/**
 * A token, secret or URL just made: shown this once, with a copy button where scripts run, and
 * what the reader should know about it (`note`) right under it.
 */
export function Revealed(
  props: { label: string; value: string; note?: string; also?: { label: string; value: string } },
) {
  return (
    <section class="revealed" aria-labelledby="revealed-title">
      <h2 id="revealed-title">{props.label}</h2>
      <p>Copy it now: it is shown only this once and can't be seen again.</p>
      <div class="copy">
        <input
          id="revealed-value"
          class="secret"
          readonly
          value={props.value}
          aria-label={props.label}
        />
        <button type="button" class="copy-button" data-copy="revealed-value" hidden>Copy</button>
      </div>
      {props.also && (
        <div class="copy">
          <input
            id="revealed-also"
            class="secret"
            readonly
            value={props.also.value}
            aria-label={props.also.label}
          />
          <button type="button" class="copy-button" data-copy="revealed-also" hidden>Copy</button>
        </div>
      )}
      {props.note && <p class="revealed-note">{props.note}</p>}
    </section>
  );
}

/** A time as people read it, with the exact value for machines. */
export function Time(props: { at: string | null; never?: string }) {
  if (!props.at) return <span class="muted">{props.never ?? "never"}</span>;
  return <time datetime={props.at}>{props.at.slice(0, 16).replace("T", " ")} UTC</time>;
}

/**
 * A table; on a narrow screen each row becomes a card whose cells say their column (cells carry
 * `data-label`). `actions` adds a last column of buttons.
 */
export function Table(
  props: { columns: string[]; actions?: boolean; class?: string; children?: Child },
) {
  return (
    <div class="table-wrap">
      <table class={props.class}>
        <thead>
          <tr>
            {props.columns.map((c) => <th scope="col">{c}</th>)}
            {props.actions && (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}
