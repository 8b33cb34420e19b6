/**
 * The event catalog (`GET /api/v1/event-types`, the settings screen's "Event types"): what each
 * type a subscription can be sent means, the version it came in, an example, and the JSON Schema
 * (2020-12) of its whole delivery body, made from event_schemas.ts, so nothing here is a copy.
 * A test send (sends.ts) delivers a type's example.
 */
import { z } from "zod";
import { type CatalogType, ENVELOPES, EVENT_DATA } from "./event_schemas.ts";
import { EXAMPLE_AT, exampleData } from "./examples.ts";

export type { CatalogType } from "./event_schemas.ts";

/** Every type, in the catalog's order. */
export const CATALOG_TYPES = Object.keys(EVENT_DATA) as CatalogType[];

export const isCatalogType = (s: string): s is CatalogType =>
  (CATALOG_TYPES as string[]).includes(s);

const ABOUT: Record<CatalogType, { description: string; added_in: string }> = {
  "message.created": {
    description: "A message was posted to a channel: thread replies and the system notices " +
      "`member_joined` / `member_left` included; not on an idempotent replay. An agent's " +
      "streamed reply (`chat.startStream`) fires it once, whole, when its stream stops.",
    added_in: "0.27.0",
  },
  "message.updated": { description: "A message was edited.", added_in: "0.27.0" },
  "message.deleted": {
    description: "A message was deleted: `data` is its tombstone, the body blanked.",
    added_in: "0.27.0",
  },
  "reaction.added": { description: "A reaction was added to a message.", added_in: "0.27.0" },
  "channel.member_added": { description: "A member was added to a channel.", added_in: "0.27.0" },
  "poll.vote_added": { description: "Someone voted for a poll's option.", added_in: "0.29.0" },
  "poll.vote_removed": {
    description: "A vote was taken back, or moved to another option.",
    added_in: "0.29.0",
  },
  "poll.closed": {
    description: "A poll was closed: `data` is the message with its final counts.",
    added_in: "0.29.0",
  },
  "ping": {
    description: "A test, sent only by `POST /webhooks/{id}/test` or the settings screen.",
    added_in: "0.27.0",
  },
};

export interface CatalogEntry {
  type: CatalogType;
  description: string;
  /** JSON Schema (2020-12) of the delivery body; shared parts under `$defs`. */
  schema: Record<string, unknown>;
  /** A whole delivery body of this type. */
  example: { id: string; type: CatalogType; created_at: string; data: unknown };
  added_in: string;
}

/** The catalog, in a fixed order; the same on every call. */
export function eventCatalog(): CatalogEntry[] {
  return CATALOG_TYPES.map((type) => ({
    type,
    description: ABOUT[type].description,
    schema: standalone(type),
    example: {
      id: "0195a8c2-1f40-7000-8000-00000000e000",
      type,
      created_at: EXAMPLE_AT,
      data: exampleData(type),
    },
    added_in: ABOUT[type].added_in,
  }));
}

/** What a type's description says, for the screen's and openapi.yaml's summaries. */
export const describeType = (type: CatalogType): string => ABOUT[type].description;

/** Formats JSON Schema checks where a receiver's validator reads them, without zod's patterns. */
function plainFormats({ jsonSchema }: { jsonSchema: Record<string, unknown> }) {
  if (jsonSchema.format === "uuid" || jsonSchema.format === "date-time") {
    delete jsonSchema.pattern;
  }
}

/** One type's delivery body as a schema of its own: the envelope at the top, the rest in $defs. */
function standalone(type: CatalogType): Record<string, unknown> {
  type Made = { $ref: string; $schema: string; $defs: Record<string, Record<string, unknown>> };
  const made = z.toJSONSchema(ENVELOPES[type], { override: plainFormats }) as unknown as Made;
  const { [made.$ref.slice("#/$defs/".length)]: top, ...defs } = made.$defs;
  return { $schema: made.$schema, ...top, $defs: defs };
}

/**
 * The schemas openapi.yaml's components hold for messages and events, by name, referring to one
 * another as `#/components/schemas/<name>` (written there by `deno task catalog`).
 */
export function catalogComponents(): Record<string, Record<string, unknown>> {
  const { schemas } = z.toJSONSchema(z.globalRegistry, {
    uri: (id) => `#/components/schemas/${id}`,
    override: plainFormats,
  });
  const wanted = new Set([...Object.values(ENVELOPES)].map((s) => z.globalRegistry.get(s)?.id));
  return Object.fromEntries(
    Object.entries(schemas)
      .filter(([id]) => wanted.has(id) || SHARED.includes(id))
      .map(([id, { $schema: _s, $id: _i, ...schema }]) => [id, schema]),
  );
}

const SHARED = [
  "Uuid",
  "NullableDateTime",
  "EventType",
  "Member",
  "ReactionSummary",
  "Message",
  "Attachment",
  "Poll",
  "Block",
];
