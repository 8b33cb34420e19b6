/** What the stream hub (domain/stream/hub.ts) knows of each open stream and each busy team. */
import type { Subject } from "../../core/types.ts";
import type { LogPosition } from "../../kv/stream/stream_log.ts";
import type { StreamFilter } from "./audience.ts";
import type { StreamSink } from "./sink.ts";
import type { Watched } from "./tokens.ts";

/** Everything at or before the team's current events version is behind. */
export const frontierPosition = (versionstamp: string | null): LogPosition => ({
  versionstamp: versionstamp ?? "",
  id: "~",
});

export interface OpenStream extends Watched {
  id: string;
  team: TeamState;
  subject: Subject;
  filter: StreamFilter;
  /** The last event sent (or the position it started from). */
  cursor: LogPosition;
  /** Whether it is not behind its team (rounds send to it); false while it catches up. */
  live: boolean;
  /** Whether it catches up from its reader's indexes: it started far behind, and still is. */
  fromIndexes: boolean;
  /** Settles when the server is done with the response (its connection closed, or it ended). */
  done?: Promise<void>;
  sink: StreamSink;
  closed: boolean;
  /** Settles once the hub is done with the stream. */
  ended: PromiseWithResolvers<void>;
}

export interface TeamState {
  streams: Set<OpenStream>;
  /** Where the last round ended: live streams are at or past it. */
  position: LogPosition;
  /** The events version the last round read up to. */
  version: string | null;
  round: Promise<void> | null;
  again: boolean;
  /** The last personal notice (kv/ephemeral.ts) of the team looked at: later ones are new. */
  noticesSeen: string | null;
}

/** A stream the hub let open: `run` serves it to `sink` until it ends; `gone` when its reader left. */
export interface OpenedStream {
  run(sink: StreamSink): Promise<void>;
  gone(): void;
}

/** What a stream is opened with. */
export interface StreamRequest {
  subject: Subject;
  filter: StreamFilter;
  /** Where it resumes after; null: from now. */
  from: LogPosition | null;
  /** Settles when the server is done with the response: what a cut-off stream waits for. */
  done?: Promise<void>;
}
