import { Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * The service's Prometheus metrics, one registry per process. Request and delivery figures are
 * counted as they happen; the backlog and the subscriptions are read when scraped (see
 * routes/metrics.ts), so an idle service pays nothing for them.
 */
export const registry = new Registry();

export const httpRequests = new Counter({
  name: "http_requests_total",
  help: "HTTP requests answered, by route pattern, method and status.",
  labelNames: ["route", "method", "status"] as const,
  registers: [registry],
});

export const httpDuration = new Histogram({
  name: "http_request_duration_seconds",
  help: "Time from a request's arrival to its answer, by route pattern and method.",
  labelNames: ["route", "method"] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});

export const rateLimited = new Counter({
  name: "http_rate_limited_total",
  help: "Requests refused with 429, by what was limited (token, incoming_webhook, guessing).",
  labelNames: ["kind"] as const,
  registers: [registry],
});

export const secretMisses = new Counter({
  name: "http_secret_misses_total",
  help:
    "Requests to a secret URL whose secret matched nothing, by surface (incoming_webhook, login_link).",
  labelNames: ["surface"] as const,
  registers: [registry],
});

export const deliveries = new Counter({
  name: "webhook_deliveries_total",
  help: "Outgoing webhook delivery attempts, by outcome.",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

export const attemptDuration = new Histogram({
  name: "webhook_attempt_duration_seconds",
  help: "Time one delivery attempt took, sending to answer (or timeout).",
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const jobsPending = new Gauge({
  name: "webhook_jobs_pending",
  help: "Delivery jobs waiting in the store, across all processes.",
  registers: [registry],
});

export const oldestJobAge = new Gauge({
  name: "webhook_oldest_job_age_seconds",
  help: "Age of the oldest pending delivery job (0 when none waits).",
  registers: [registry],
});

let inMemory: () => number = () => 0;

/** Where the in-memory gauge reads from: this process's delivery engine, when it runs one. */
export function reportInMemory(source: () => number): void {
  inMemory = source;
}

// Registered with the registry, which reads it when scraped: nothing else refers to it.
new Gauge({
  name: "webhook_jobs_in_memory",
  help: "Delivery jobs this process holds in memory (at most WEBHOOKS_MAX_IN_MEMORY).",
  registers: [registry],
  collect() {
    this.set(inMemory());
  },
});

export const subscriptions = new Gauge({
  name: "webhook_subscriptions",
  help: "Outgoing webhook subscriptions, by status.",
  labelNames: ["status"] as const,
  registers: [registry],
});

export const deliveryStalls = new Counter({
  name: "webhook_delivery_stalls_total",
  help:
    "Times this process found delivery work waiting with room for it and nothing under way (see delivery/stall_watch.ts).",
  registers: [registry],
});

export const appendBatchesSplit = new Counter({
  name: "kv_append_batches_split_total",
  help:
    "Batches of posts to one channel that went over a commit's limits and were committed one by one instead.",
  registers: [registry],
});

export const buildInfo = new Gauge({
  name: "build_info",
  help: "Always 1: the service's version and the store layout it reads and writes, as labels.",
  labelNames: ["version", "layout"] as const,
  registers: [registry],
});

export const socketConnections = new Gauge({
  name: "socket_mode_connections",
  help: "Open Socket Mode connections, by app and by the instance holding them.",
  labelNames: ["app_id", "instance"] as const,
  registers: [registry],
});

export const socketBacklog = new Gauge({
  name: "socket_mode_backlog",
  help: "Events waiting for a Socket Mode app's ack, by app.",
  labelNames: ["app_id"] as const,
  registers: [registry],
});

export const socketOldestPending = new Gauge({
  name: "socket_mode_oldest_pending_seconds",
  help: "Age of a Socket Mode app's oldest unacked event (0 when none waits), by app.",
  labelNames: ["app_id"] as const,
  registers: [registry],
});

export const socketDropped = new Gauge({
  name: "socket_mode_dropped",
  help: "Events a Socket Mode app never got: dropped past SOCKET_MODE_BACKLOG, ever, by app.",
  labelNames: ["app_id"] as const,
  registers: [registry],
});
