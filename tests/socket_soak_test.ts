/**
 * Socket Mode loses nothing under churn (decisions.md, "Apps without a public URL"): posts made
 * through one instance while the app, Slack's own `@slack/socket-mode` client, reconnects every 2
 * seconds to the other, which is SIGKILLed twice and started again on its address. Every event
 * arrives; duplicates (at least once) are counted and each carries `retry_attempt`.
 * SOCKET_SOAK_EVENTS sets how many (600 in the suite; `deno task soak:socket` runs 10,000).
 */
import assert from "node:assert/strict";
import { api, workspace } from "./harness.ts";
import { cli, type Service, sharedStore, startService } from "./processes.ts";
import { sleep, waitUntil } from "./webhook_receivers.ts";
import { slackSdks } from "./slack_sdks.ts";

const EVENTS = Number(Deno.env.get("SOCKET_SOAK_EVENTS") ?? 600);
const MANIFEST = new URL("../examples/bolt_socket_manifest.yaml", import.meta.url).pathname;

/** What the app was sent: each post's deliveries, by the post's number, with their retry_num. */
type Heard = Map<number, number[]>;

/** The app: a new connection every 2 s, to `url`, whatever happens to the instance there. */
function reconnectingApp(url: string, appToken: string, heard: Heard) {
  let running = true;
  let connections = 0;
  const loop = (async () => {
    const { SocketModeClient } = await import("npm:@slack/socket-mode@3.1.0");
    while (running) {
      const client = new SocketModeClient({
        appToken,
        clientOptions: { slackApiUrl: `${url}/api/slack/`, retryConfig: { retries: 0 } },
        logLevel: "error" as never,
        autoReconnectEnabled: false,
      });
      client.on("slack_event", async ({ ack, body, type, retry_num }) => {
        await ack();
        const n = type === "events_api" ? /^soak (\d+)$/.exec(body.event?.text ?? "")?.[1] : null;
        if (n) heard.set(Number(n), [...heard.get(Number(n)) ?? [], retry_num ?? 0]);
      });
      try {
        await client.start();
        connections++;
        await sleep(2_000);
      } catch {
        await sleep(200); // its instance is down: try again
      }
      await client.disconnect().catch(() => {});
    }
  })();
  return {
    connections: () => connections,
    async stop() {
      running = false;
      await loop;
    },
  };
}

Deno.test({
  name:
    `socket mode: ${EVENTS} events, the app reconnecting every 2 s, its instance SIGKILLed twice: none lost`,
  ignore: !slackSdks,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const store = await sharedStore();
    const services: Service[] = [];
    let app: ReturnType<typeof reconnectingApp> | null = null;
    try {
      services.push(await startService(store.env), await startService(store.env));
      const a = store.as(services[0]);
      const bPort = Number(new URL(services[1].url).port);
      const w = await workspace(store.ctx);
      const general = w.team.general_channel_id;
      const made = await cli(store.env, "app:create", "--manifest", MANIFEST);
      const installed = await cli(store.env, "app:install", "--app", made.id, "--team", w.team.id);
      const { token } = await cli(store.env, "app:token", "--app", made.id);
      await cli(store.env, "member:add", "--channel", general, "--user", installed.bot_user_id);

      const heard: Heard = new Map();
      app = reconnectingApp(services[1].url, token, heard);
      const started = performance.now();
      let next = 0;
      // One restart after the other: a second kill while the first restart still starts would
      // kill the dead process again and start a second service on the restarting one's port.
      let restarts = Promise.resolve();
      const poster = async () => {
        while (next < EVENTS) {
          const n = next++;
          const res = await api(a, "POST", `/channels/${general}/messages`, {
            token: w.member.token,
            body: { body: `soak ${n}` },
          });
          assert.equal(res.status, 201, JSON.stringify(res.body));
          // The app's instance SIGKILLed at a third and two thirds, and started on its address.
          if (n === Math.floor(EVENTS / 3) || n === Math.floor((2 * EVENTS) / 3)) {
            restarts = restarts.then(async () => {
              await services[1].kill();
              services[1] = await startService(store.env, { port: bPort });
            });
          }
        }
      };
      await Promise.all(Array.from({ length: 4 }, poster));
      await restarts;
      const posted = performance.now() - started;
      await waitUntil(() => heard.size >= EVENTS, 120_000, `${EVENTS} events`).catch((e) => {
        throw new Error(`${e.message}: ${heard.size} arrived`);
      });
      const seconds = (performance.now() - started) / 1000;

      const missing = Array.from({ length: EVENTS }, (_, n) => n).filter((n) => !heard.has(n));
      assert.deepEqual(missing, [], "none lost");
      const again = [...heard.values()].filter((d) => d.length > 1);
      const duplicates = again.reduce((sum, d) => sum + d.length - 1, 0);
      for (const retries of again) {
        assert.ok(retries.slice(1).every((r) => r >= 1), `a redelivery without retry_attempt`);
      }
      console.log(
        `${EVENTS} events in ${seconds.toFixed(1)} s (posted in ${
          (posted / 1000).toFixed(1)
        } s), ` +
          `${app.connections()} connections, 2 SIGKILLs: 0 lost, ${duplicates} sent again ` +
          `(${again.length} events), each with retry_attempt`,
      );
    } finally {
      await app?.stop();
      for (const s of services) await s.kill();
      await store.cleanup();
    }
  },
});
