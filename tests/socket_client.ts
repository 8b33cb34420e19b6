/**
 * A Socket Mode connection of an app as a bare WebSocket, for what Slack's clients hide: every
 * message the service sends it, in order.
 */
import { waitUntil } from "./webhook_receivers.ts";

/** What the service sends a connection, as far as the tests look. */
export interface SocketMessage {
  type: string;
  reason?: string;
  envelope_id?: string;
  num_connections?: number;
  connection_info?: { app_id: string };
  payload?: { event?: { text?: string } };
}

/**
 * Opens a connection with the app-level token, through `apps.connections.open` at `base`; resolves
 * once its first message (`hello`, or a `disconnect`) came. With `ack`, every envelope is acked;
 * without, none is, and what it held goes again once it closes.
 */
export async function rawSocket(base: string, appToken: string, { ack = true } = {}) {
  const opened = await fetch(`${base}/api/slack/apps.connections.open`, {
    method: "POST",
    headers: { Authorization: `Bearer ${appToken}` },
  }).then((r) => r.json());
  const ws = new WebSocket(opened.url);
  const got: SocketMessage[] = [];
  const closed = new Promise((done) => ws.addEventListener("close", done));
  ws.onmessage = (e) => {
    const message: SocketMessage = JSON.parse(e.data);
    got.push(message);
    if (ack && message.envelope_id) ws.send(JSON.stringify({ envelope_id: message.envelope_id }));
  };
  await waitUntil(() => got.length > 0, 5_000, "the connection's first message");
  const send = (frame: string | Uint8Array<ArrayBuffer>) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(frame);
  };
  return { got, closed, send, close: () => (ws.close(), closed) };
}
