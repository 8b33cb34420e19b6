/** What a Slack Web API method is: the scope it needs and what it answers, given its call. */
import type { Ctx } from "../../domain/context.ts";
import type { Scope, Subject } from "../../core/types.ts";

/** A method's parameters as the client sent them: strings, JSON bodies' values as they are. */
export type Params = Record<string, unknown>;

export interface MethodCall {
  ctx: Ctx;
  subject: Subject;
  params: Params;
}

/** One Web API method: the scope it needs (none for auth.test) and what it answers. */
export interface Method {
  scope: Scope | null;
  /** The Slack scope that grants it, where it is not the usual one for `scope`. */
  slackScope?: string;
  run(call: MethodCall): Promise<Record<string, unknown>>;
}
