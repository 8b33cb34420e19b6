/**
 * Message metadata (decisions.md, "Slack's agents": "Message metadata"): an app's structured data
 * kept with a message, `{ event_type, event_payload }` as Slack's `metadata`, given back where
 * asked for (`include_all_metadata`, the REST API's `metadata`). Bolt's assistant keeps a thread's
 * context in it.
 */
import { invalid } from "../../core/errors.ts";

export interface MessageMetadata {
  event_type: string;
  event_payload: Record<string, unknown>;
}

/** The largest metadata kept, as JSON. */
export const MAX_METADATA_BYTES = 8 * 1024;

const EVENT_TYPE = /^[A-Za-z0-9_.-]{1,255}$/;

/**
 * The metadata a request gave, checked (JSON text or an object; a form sends text): undefined
 * when it gave none, null to take it away; the 422 on `field` otherwise.
 */
export function parseMetadata(
  value: unknown,
  field = "metadata",
): MessageMetadata | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value === "") return null;
  let given = value;
  if (typeof value === "string") {
    try {
      given = JSON.parse(value);
    } catch {
      throw invalid(field, "The metadata must be a JSON object { event_type, event_payload }.");
    }
  }
  if (typeof given !== "object" || given === null || Array.isArray(given)) {
    throw invalid(field, "The metadata must be an object { event_type, event_payload }.");
  }
  const { event_type, event_payload = {} } = given as Record<string, unknown>;
  if (typeof event_type !== "string" || !EVENT_TYPE.test(event_type)) {
    throw invalid(field, "The metadata's event_type must be 1 to 255 of A-Z a-z 0-9 _ . -");
  }
  if (typeof event_payload !== "object" || event_payload === null || Array.isArray(event_payload)) {
    throw invalid(field, "The metadata's event_payload must be an object.");
  }
  const kept = { event_type, event_payload: event_payload as Record<string, unknown> };
  if (new TextEncoder().encode(JSON.stringify(kept)).length > MAX_METADATA_BYTES) {
    throw invalid(field, `The metadata is larger than ${MAX_METADATA_BYTES} bytes as JSON.`);
  }
  return kept;
}
