/**
 * The states of a delivery job (one event to one subscription) and every move between them, with
 * the module that decides it. A mistake here is a lost or doubled delivery under load, not a type
 * error, so the moves are data: ARCHITECTURE.md draws this table, and each module named here
 * marks where it makes its move with `job move "<name>"` (tests/job_states_test.ts keeps all three
 * the same). What a move writes to the store, kv/outbox/job_moves.ts writes, and nothing else does.
 */

export type JobState =
  /** First attempt in its event's handed-jobs record, leased to the committing process, in its window. */
  | "handed"
  /** Handed, but the process's window was full: referenced in memory until it has room. */
  | "waiting"
  /** A job row no process holds: any engine may lease it once due. */
  | "free"
  /** A job row one engine leased and holds in its window. */
  | "leased"
  /** In the dispatcher: its attempt is claimed, signed, sent, and its answer awaited. */
  | "in_flight"
  /** Gone: delivered, failed for good, or its subscription deleted or disabled. */
  | "settled";

export interface JobMove {
  from: readonly JobState[];
  to: JobState;
  /** The module that decides the move (its writes are kv/outbox/job_moves.ts's). */
  by: string;
  /** When it happens. */
  when: string;
}

export const JOB_MOVES = {
  hand: {
    from: [],
    to: "handed",
    by: "kv/outbox/outbox.ts",
    when: "a change commits its event while the process's window has room",
  },
  wait: {
    from: [],
    to: "waiting",
    by: "kv/outbox/outbox.ts",
    when: "a change commits its event with the window full and room to wait",
  },
  enqueue: {
    from: [],
    to: "free",
    by: "kv/outbox/outbox.ts",
    when: "a change commits its event with no room to hand or wait (or no engine here)",
  },
  start: {
    from: ["handed", "leased"],
    to: "in_flight",
    by: "delivery/engine.ts",
    when: "the dispatcher has room (handed ones after the post's answer: core/after_answers.ts)",
  },
  feed: {
    from: ["waiting"],
    to: "in_flight",
    by: "delivery/waiting.ts",
    when: "its subscription's lane has room",
  },
  wait_out: {
    from: ["waiting"],
    to: "free",
    by: "delivery/waiting.ts",
    when: "it waited 500 ms while another instance runs, or its record's lease runs short",
  },
  expand: {
    from: ["handed", "waiting"],
    to: "free",
    by: "kv/outbox/handed_jobs.ts",
    when: "its record's lease ran out (the process stopped or fell far behind)",
  },
  lease: {
    from: ["free"],
    to: "leased",
    by: "delivery/puller.ts",
    when: "it is due and an engine has room",
  },
  lapse: {
    from: ["leased"],
    to: "free",
    by: "kv/outbox/leases.ts",
    when: "its holder's lease ran out (the holder died), or the holder stops (unlease)",
  },
  retry: {
    from: ["in_flight"],
    to: "free",
    by: "kv/outbox/settlement.ts",
    when: "the attempt failed and attempts remain: due again after the schedule's wait",
  },
  settle: {
    from: ["in_flight"],
    to: "settled",
    by: "kv/outbox/settlement.ts",
    when: "the attempt succeeded, or was its last",
  },
  drop: {
    from: ["in_flight"],
    to: "settled",
    by: "delivery/attempt.ts",
    when: "its claim finds the subscription gone or disabled, or the event gone",
  },
} as const satisfies Record<string, JobMove>;

/**
 * The states of a Socket Mode envelope (one event to one Socket Mode app's listener), the second
 * queue: it can only go where the app's connections are, waits without spending attempts, and
 * keeps the app's order, so it is not a delivery job. Drawn in ARCHITECTURE.md as the job table
 * is, each move marked in its module with `envelope move "<name>"`.
 */
export type EnvelopeState =
  /** A record in the app's queue that no connection holds (or whose claim ran out). */
  | "queued"
  /** Sent on one connection (on some instance), awaiting its ack until its claim ends. */
  | "claimed"
  /** Gone: a connection acked it. */
  | "acked"
  /** Gone unsent: past the app's backlog, or its install went. */
  | "dropped"
  /** Gone unsent: the 30-day horizon passed (no app connected all that time). */
  | "expired";

export interface EnvelopeMove {
  from: readonly EnvelopeState[];
  to: EnvelopeState;
  by: string;
  when: string;
}

export const ENVELOPE_MOVES = {
  queue: {
    from: [],
    to: "queued",
    by: "kv/apps/socket_outbox.ts",
    when: "an event the app's listener hears commits, with no connection of the app here",
  },
  hand: {
    from: [],
    to: "claimed",
    by: "kv/apps/socket_outbox.ts",
    when: "an event the app's listener hears commits, with a connection of the app here",
  },
  claim: {
    from: ["queued"],
    to: "claimed",
    by: "kv/apps/socket_queue.ts",
    when: "a connection of the app has room, oldest first",
  },
  ack: {
    from: ["claimed"],
    to: "acked",
    by: "kv/apps/socket_queue.ts",
    when: "a connection acks its envelope id (whichever connection had it)",
  },
  release: {
    from: ["claimed"],
    to: "queued",
    by: "kv/apps/socket_queue.ts",
    when: "its connection closed before the ack: it goes again at once",
  },
  lapse: {
    from: ["claimed"],
    to: "queued",
    by: "delivery/apps/socket/queue_sender.ts",
    when: "its claim ran out unacked (Slack's 3 s): read as queued, sent again with a retry",
  },
  drop: {
    from: ["queued", "claimed"],
    to: "dropped",
    by: "kv/apps/socket_queue.ts",
    when: "the app's backlog passes SOCKET_MODE_BACKLOG (oldest first), or its install goes",
  },
  expire: {
    from: ["queued", "claimed"],
    to: "expired",
    by: "kv/apps/socket_outbox.ts",
    when: "30 days pass (the record's expiry, as the event's)",
  },
} as const satisfies Record<string, EnvelopeMove>;
