import { createApp } from "./routes/app.ts";
import { serveForever } from "./routes/serve.ts";
import { CRON_BUDGET_MS, CRON_NAME, CRON_SCHEDULE, deliverDue } from "./delivery/cron.ts";
import { SCHEDULED_CRON_NAME, ScheduledPoster } from "./domain/messages/scheduled_posting.ts";
import { STREAMS_CRON_NAME, StreamStopper } from "./domain/messages/streams.ts";
import { serviceRunner } from "./cli/service_runner.ts";
import { startDeliveryEngine } from "./delivery/engine.ts";
import type { DeliveryEngine } from "./delivery/engine_contract.ts";
import { configureLog, flushLog, log } from "./core/log.ts";
import { loadSettings, SettingsError, settingsInEffect } from "./core/settings.ts";
import { answerHelp } from "./core/task_help.ts";
import { openStore, where } from "./kv/store/open.ts";
import { StreamHub } from "./domain/stream/hub.ts";
import { SocketHub } from "./delivery/apps/socket/hub.ts";
import { deafLookEveryMs, watchDeafApps } from "./domain/apps/socket/deaf_watch.ts";
import { AppSender } from "./delivery/apps/sender.ts";
import { loadKeyring } from "./domain/data/app_key.ts";
import { Presence } from "./domain/data/service.ts";
import type { Ctx } from "./domain/context.ts";
import { buildInfo } from "./core/metrics.ts";
import { workPair } from "./core/work_pair.ts";
import type { JobRoom } from "./kv/outbox/outbox.ts";
import type { CommitWork } from "./kv/store/plan.ts";
import { build } from "./domain/data/operations.ts";
import { Foreground } from "./core/foreground.ts";
import { Periodic } from "./core/periodic.ts";

/** This process's delivery engine, once started (null with the platform switched off). */
const { promise: engineReady, resolve: engineStarted } = Promise.withResolvers<
  DeliveryEngine | null
>();

// Declared before anything else, at the top level, where Deno Deploy finds cron tasks. It is
// what sends retries on hosts whose timers stop between requests; elsewhere it finds nothing due.
Deno.cron(CRON_NAME, CRON_SCHEDULE, async () => deliverDue(await engineReady));
/** This process's poster of scheduled messages, once made (null with the platform off). */
const { promise: posterReady, resolve: posterMade } = Promise.withResolvers<
  ScheduledPoster | null
>();
Deno.cron(SCHEDULED_CRON_NAME, CRON_SCHEDULE, async () => {
  await (await posterReady)?.runDue(CRON_BUDGET_MS);
});
/** This process's stopper of agents' streams left open, once made (null with the platform off). */
const { promise: stopperReady, resolve: stopperMade } = Promise.withResolvers<
  StreamStopper | null
>();
Deno.cron(STREAMS_CRON_NAME, CRON_SCHEDULE, async () => {
  await (await stopperReady)?.runDue(CRON_BUDGET_MS);
});

/** A setting that can't work ends the process with one line naming it, before anything serves. */
async function orExit<T>(step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (e) {
    if (!(e instanceof SettingsError)) throw e;
    flushLog();
    console.error(e.message);
    Deno.exit(1);
  }
}

answerHelp(
  Deno.args,
  `Usage: deno task start
Starts the service: the REST API, webhooks, the settings screen and the admin path, on the store
KV_PATH names (made, with its APP_KEY, on first start). Stop it with Ctrl-C or SIGTERM.

Settings (the environment; docs/operating.md says what each means), as in effect now:
${settingsInEffect(Deno.env.toObject())}`,
);
const settings = await orExit(() => loadSettings(Deno.env.toObject()));
configureLog(settings.log);
const kv = await orExit(() => openStore(settings));
// Work after a commit: the store produces it, the delivery engine consumes it.
const work = workPair<CommitWork, JobRoom>();
kv.produceInto(work.producer);
const ctx: Ctx = { kv, settings, keyring: await orExit(() => loadKeyring(settings, kv)) };
const presence = new Presence(ctx);
await presence.start();
if (settings.webhooks.allowPrivateUrls) {
  log.warn(
    "WEBHOOKS_ALLOW_PRIVATE_URLS=true: webhooks may be sent to loopback and private addresses; for local development and tests only",
  );
}
buildInfo.set({ version: build.version, layout: String(build.layout) }, 1);
// The events of what the store commits here, the stream hub hears at once on its bus; what other
// processes commit, it finds by polling.
const streams = new StreamHub(ctx);
kv.committed.subscribe((committed) => streams.heard(committed));
// Socket Mode apps' connections: the events of this process's commits for an app connected here
// are claimed in the commit and sent when it lands; what others commit, the hub finds by polling.
const sockets = new SocketHub(ctx);
kv.sendSocketsFrom(sockets.here);
kv.committed.subscribe((committed) => sockets.heard(committed));
// What the service asks apps and waits for (commands, presses, views), over either transport.
const calls = new AppSender(sockets);
const app = createApp(ctx, { streams, calls, admin: serviceRunner(ctx, calls) });
// A Socket Mode app away with events waiting: its people are told (every instance looks, one tells).
const deafWatch = new Periodic(() => watchDeafApps(ctx), {
  everyMs: deafLookEveryMs(ctx),
  what: "socket mode: looking for apps away",
});
if (settings.integrationsEnabled) deafWatch.start();
// Requests go first; delivery, on the same event loop and store writer, steps aside for them.
const foreground = new Foreground();
// With the platform off nothing is delivered; pending jobs wait until it is switched back on.
const engine = settings.integrationsEnabled
  ? startDeliveryEngine(ctx, work.intake, { foreground })
  : null;
engineStarted(engine);
// Scheduled messages: posted at their time where timers run, else by the every-minute cron task.
const poster = settings.integrationsEnabled ? new ScheduledPoster(ctx) : null;
if (poster && settings.deliveryTimers) poster.start();
posterMade(poster);
// Agents' replies streamed and never stopped: stopped after 10 minutes, by whichever process looks.
const stopper = settings.integrationsEnabled ? new StreamStopper(ctx) : null;
if (stopper && settings.deliveryTimers) stopper.start();
stopperMade(stopper);
if (engine && !settings.deliveryTimers) {
  log.info(
    "delivery: no timers of its own (DELIVERY_TIMERS=false): what is due later goes out with the every-minute cron task",
  );
}
if (settings.inContainer && !settings.baseUrlSet) {
  log.warn(
    `BASE_URL: not set, so the links this service gives out (sign-in links, incoming-webhook URLs, paging links) name ${settings.baseUrl}, the container's own address; set BASE_URL to the address people and apps reach it at (docker run -e BASE_URL=https://chat.example.com …)`,
  );
}
if (!settings.integrationsEnabled) {
  log.warn(
    "INTEGRATIONS_ENABLED=false: the API and incoming webhooks answer 404 and nothing is delivered",
  );
}

const serving = await orExit(() => {
  try {
    return serveForever({
      port: settings.port,
      hostname: settings.host,
      onListen: ({ hostname, port }) =>
        log.info(
          `Listening on ${hostname}:${port} (BASE_URL ${settings.baseUrl}), KV at ${
            where(settings)
          }; version ${build.version}, store layout ${build.layout}`,
        ),
    }, (req, info) => foreground.during(() => app.fetch(req, info)));
  } catch (e) {
    if (!(e instanceof Deno.errors.AddrInUse)) throw e;
    throw new SettingsError(
      `PORT: ${settings.port} is already in use on ${settings.host}; stop what listens there, or set PORT.`,
    );
  }
});

let stopping = false;
/**
 * SIGTERM or SIGINT: end the event streams (with `retry:`, so their clients come back to another
 * instance), stop accepting, let the requests and delivery attempts in flight finish (an attempt
 * within WEBHOOKS_TIMEOUT), free the leases of jobs not started, close the store, exit 0. A
 * second signal meanwhile ends the process at once.
 */
async function shutdown(signal: string) {
  if (stopping) Deno.exit(1);
  stopping = true;
  log.info("shutting down: finishing requests and delivery attempts in flight", { signal });
  // Event streams end first: the server's shutdown waits for every open response.
  await app.close();
  await serving.shutdown();
  await engine?.stop();
  await poster?.stop();
  await stopper?.stop();
  await deafWatch.stop();
  await presence.stop();
  await kv.settled();
  kv.close();
  log.info("stopped");
  flushLog();
  Deno.exit(0);
}
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, () => void shutdown(signal));
}
