/** A reply an agent streams (decisions.md, "Slack's agents": "Streamed replies"), as stored. */

/** A task an agent's stream shows, as its `task_update` chunks left it. */
export interface StreamTask {
  id: string;
  title: string;
  status: "pending" | "in_progress" | "complete" | "error";
  details?: string;
  output?: string;
}

/** What a streamed reply has said so far, kept on it until its stream stops. */
export interface MessageStream {
  started_at: string;
  /** Whom it streams to: the person named outside a direct channel, the person in one. */
  recipient_user_id: string | null;
  /** How its tasks show: a card each (`timeline`), or one plan. */
  mode: "timeline" | "plan";
  text: string;
  tasks: StreamTask[];
  plan_title: string | null;
  /** Blocks its `blocks` chunks added, checked as a message's are. */
  blocks: ({ type: string } & Record<string, unknown>)[];
}
