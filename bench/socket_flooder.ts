/**
 * A hostile Socket Mode app, in a process of its own: connects with its app-level token and sends
 * frames as fast as the socket takes them (acks of envelopes it never held, text that is not JSON,
 * frames near 1 MiB), connecting again whenever it is closed, until it is killed. Prints how many
 * frames it sent, and how many connections were closed on it, each second to stdout.
 * Usage: deno run --allow-net socket_flooder.ts <base url> <app token>
 */
const [base, token, kinds = "ack,text,big"] = Deno.args;
const KINDS: Record<string, string> = {
  ack: JSON.stringify({ envelope_id: `${crypto.randomUUID()}_${crypto.randomUUID()}` }),
  text: "not json at all",
  big: `{"envelope_id":"x","payload":"${"a".repeat(1000 * 1024)}"}`,
};
const FRAMES = kinds.split(",").map((k) => KINDS[k]);
let sent = 0;
let closed = 0;
setInterval(() => console.log(JSON.stringify({ sent, closed })), 1000);

async function flood() {
  const opened = await fetch(`${base}/api/slack/apps.connections.open`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}` },
  }).then((r) => r.json());
  if (!opened.ok) return await new Promise((r) => setTimeout(r, 100));
  const ws = new WebSocket(opened.url);
  await new Promise<void>((done) => {
    ws.onopen = async () => {
      if (kinds === "churn") return ws.close();
      for (let i = 0; ws.readyState === WebSocket.OPEN; i++) {
        ws.send(FRAMES[i % FRAMES.length]);
        sent++;
        // Yield now and then, so the close the service sends is heard.
        if (i % 50 === 49) await new Promise((r) => setTimeout(r, 0));
      }
    };
    ws.onclose = () => {
      closed++;
      done();
    };
    ws.onerror = () => {};
  });
}

for (;;) await flood();
