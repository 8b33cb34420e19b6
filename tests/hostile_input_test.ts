/**
 * Hostile input is a class, not a case (decisions.md "Hardening rules"): `Object.prototype`'s
 * names and control characters, as names and as values, thrown at every route the app serves (its
 * router's own list, so a new route is covered without editing this test), in the path, the
 * query, JSON keys and values at every depth, and form fields; and at a Socket Mode connection as
 * frames. Every answer must be below 500, the process must live (a header Deno's writer refuses
 * ends it, and this test with it), and `Object.prototype` and its kin must be as they were.
 *
 * Each path parameter holds a real record of the world (tests/hostile_world.ts) while another
 * part is hostile, and each body starts from what openapi.yaml says the operation takes, so the
 * hostile part reaches past the lookups and the validation into the rules.
 */
import assert from "node:assert/strict";
import { CONTROL_TEXTS, HOSTILE, type HostileWorld, hostileWorld } from "./hostile_world.ts";
import { matchPath, openApi } from "./openapi_check.ts";
import { SLACK_METHODS } from "../routes/slack/web_api.ts";
import { headerGuard } from "../routes/middleware/header_guard.ts";
import { Hono } from "hono";

// deno-lint-ignore no-explicit-any
type Json = any;

/** The objects a write keyed by outside data would change, and what they hold now. */
const GUARDED: Record<string, object> = {
  "Object.prototype": Object.prototype,
  Object,
  "Array.prototype": Array.prototype,
  "Function.prototype": Function.prototype,
  "String.prototype": String.prototype,
  "Promise.prototype": Promise.prototype,
  JSON,
};

const snapshot = () =>
  new Map(
    Object.entries(GUARDED).flatMap(([name, o]) =>
      Reflect.ownKeys(o).map((
        k,
      ) => [`${name}.${String(k)}`, Reflect.getOwnPropertyDescriptor(o, k)])
    ),
  );

function changedSince(before: ReturnType<typeof snapshot>): string[] {
  const now = snapshot();
  const keys = new Set([...before.keys(), ...now.keys()]);
  return [...keys].filter((k) => {
    const [a, b] = [before.get(k), now.get(k)];
    return !a || !b || a.value !== b.value || a.get !== b.get || a.set !== b.set;
  });
}

const encoder = new TextEncoder();
/** Percent-encodes every byte but the unreserved, so a control character reaches the router. */
const enc = (text: string) =>
  [...encoder.encode(text)].map((b) => {
    const ch = String.fromCharCode(b);
    return /[A-Za-z0-9_.~-]/.test(ch) ? ch : `%${b.toString(16).padStart(2, "0")}`;
  }).join("");

/** One operation the app serves: a method and a route pattern with its parameters filled. */
interface Operation {
  method: string;
  /** The router's pattern, `:name` for each parameter. */
  pattern: string;
}

/** A request to send, and what to call it when it fails. */
interface Probe {
  what: string;
  method: string;
  path: string;
  query?: string;
  body?: { type: "json" | "form"; text: string };
}

/** The app's routes, middleware aside; Slack's one `/:method` route as each method it answers. */
function operations(world: HostileWorld): Operation[] {
  const seen = new Set<string>();
  const out: Operation[] = [];
  for (const { method, path } of world.s.routes) {
    if (method === "ALL" || path.endsWith("*")) continue;
    const patterns = path === "/api/slack/:method"
      ? [...SLACK_METHODS].map((m) => `/api/slack/${m}`)
      : [path];
    for (const pattern of patterns) {
      const key = `${method} ${pattern}`;
      if (!seen.has(key)) seen.add(key) && out.push({ method, pattern });
    }
  }
  return out.sort((a, b) => risk(a) - risk(b));
}

/**
 * What may take the world's records away from the operations after it (a revoked token, a
 * session signed out or replaced by a sign-in, an archived channel) goes last, so that the rest
 * meet the records whole.
 */
const risk = (op: Operation) =>
  /\/sign-out|\/login\//.test(op.pattern) && op.method === "POST"
    ? 3
    : /archive|revoke|delete|deactivate|uninstall|remove|close|rotate|recover/.test(op.pattern)
    ? 2
    : op.method === "DELETE"
    ? 2
    : op.method === "GET" || op.method === "HEAD"
    ? 0
    : 1;

const PARAM = /:([A-Za-z_]+)/g;

/** The pattern with every parameter a real record, and `hostile` in place of `only`'s. */
function pathOf(world: HostileWorld, pattern: string, only?: { name: string; hostile: string }) {
  return pattern.replace(
    PARAM,
    (_, name: string, at: number) =>
      only?.name === name ? enc(only.hostile) : enc(world.param(pattern.slice(0, at), name)),
  );
}

/** Follows `$ref`s into the document. */
function deref(node: Json): Json {
  while (node?.$ref) {
    let target: Json = openApi().doc;
    for (const part of node.$ref.slice(2).split("/")) target = target[part];
    node = target;
  }
  return node;
}

/** A value the schema takes, built from its examples, enums and the world's records by name. */
function sample(world: HostileWorld, schema: Json, name = "", depth = 0): unknown {
  schema = deref(schema) ?? {};
  if (depth > 8) return undefined;
  const known = world.field(name);
  if ("const" in schema) return schema.const;
  if (schema.example !== undefined) return schema.example;
  if (schema.examples?.length) return schema.examples[0];
  if (schema.enum) return schema.enum[0];
  if (known !== undefined && !schema.properties && !schema.items) return known;
  if (schema.allOf) {
    return Object.assign({}, ...schema.allOf.map((s: Json) => sample(world, s, name, depth + 1)));
  }
  const options = schema.oneOf ?? schema.anyOf;
  if (options) {
    const chosen = options.find((o: Json) => deref(o)?.type !== "null") ?? options[0];
    return sample(world, chosen, name, depth + 1);
  }
  const type = Array.isArray(schema.type)
    ? schema.type.find((t: string) => t !== "null")
    : schema.type;
  if (type === "object" || schema.properties) {
    const out: Record<string, unknown> = {};
    // What it requires, and whatever the world has a record for: a client's id and secret, say.
    const names = Object.keys(schema.properties ?? {}).filter((p) => world.field(p) !== undefined);
    for (const p of new Set([...schema.required ?? [], ...names])) {
      out[p] = sample(world, schema.properties?.[p] ?? {}, p, depth + 1);
    }
    return out;
  }
  if (type === "array") return [sample(world, schema.items ?? {}, name, depth + 1)];
  if (type === "integer" || type === "number") return schema.minimum ?? 1;
  if (type === "boolean") return true;
  if (schema.format === "uuid") return crypto.randomUUID();
  return "x".repeat(Math.max(1, schema.minLength ?? 1));
}

/** The operation's entry in openapi.yaml: its query's names and its body's schema by type. */
function described(world: HostileWorld, op: Operation) {
  const template = matchPath(pathOf(world, op.pattern));
  const item = template?.item ?? {};
  const entry = item[op.method.toLowerCase()] ?? {};
  const params = [...(item.parameters ?? []), ...(entry.parameters ?? [])].map(deref);
  const content = deref(entry.requestBody)?.content ?? {};
  return {
    query: params.filter((p: Json) => p.in === "query").map((p: Json) => p.name as string),
    json: content["application/json"]?.schema,
    form: content["application/x-www-form-urlencoded"]?.schema ??
      content["multipart/form-data"]?.schema,
  };
}

const allNamed = (value: (h: string) => unknown) =>
  Object.fromEntries(HOSTILE.map((h) => [h, value(h)]));

/** Every object and array in `value`, with the path of keys to it. */
function nodesOf(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== "object" || value === null) return [];
  const inner = Object.entries(value).flatMap(([k, v]) =>
    nodesOf(v, [...path, Array.isArray(value) ? Number(k) : k])
  );
  return [path, ...inner];
}

/** A copy of `value` with the node at `path` replaced by what `change` makes of it. */
function replaced(value: unknown, path: (string | number)[], change: (node: Json) => unknown) {
  if (path.length === 0) return change(value);
  const copy: Json = Array.isArray(value) ? [...value] : { ...(value as object) };
  copy[path[0]] = replaced(copy[path[0]], path.slice(1), change);
  return copy;
}

/** Bodies: the hostile names as keys at every depth, and as every field's value. */
function hostileBodies(base: unknown, schema: Json): unknown[] {
  const out: unknown[] = [base];
  for (const path of nodesOf(base)) {
    out.push(
      replaced(base, path, (node) =>
        Array.isArray(node)
          ? [
            allNamed((h) => h),
            ...HOSTILE.map((h) => ({ type: h, block_id: h, action_id: h })),
          ]
          : { ...node, ...allNamed((h) => h) }),
    );
    out.push(
      replaced(
        base,
        path,
        (node) => Array.isArray(node) ? HOSTILE : { ...node, ...allNamed((h) => ({ [h]: h })) },
      ),
    );
  }
  const fields = new Set([
    ...Object.keys(deref(schema)?.properties ?? {}),
    ...Object.keys(typeof base === "object" && base ? base : {}),
  ]);
  for (const field of fields) {
    for (const h of HOSTILE) out.push({ ...(base as object), [field]: h });
  }
  return out;
}

/** Form bodies: the hostile names as fields, and as every field's value. */
function hostileForms(base: unknown, schema: Json): string[] {
  const fields = Object.entries(typeof base === "object" && base ? base : {}).map((
    [k, v],
  ) => [k, typeof v === "string" ? v : JSON.stringify(v)] as [string, string]);
  const form = (extra: [string, string][]) => new URLSearchParams([...fields, ...extra]).toString();
  const names = [
    ...new Set([...fields.map(([k]) => k), ...Object.keys(deref(schema)?.properties ?? {})]),
  ];
  return [
    form([]),
    form(HOSTILE.map((h) => [h, h])),
    ...names.flatMap((name) => HOSTILE.map((h) => form([[name, h]]))),
  ];
}

/** Every hostile request for one operation. */
function probesOf(world: HostileWorld, op: Operation): Probe[] {
  const { method, pattern } = op;
  const { query, json, form } = described(world, op);
  const reads = method === "GET" || method === "HEAD";
  const bodies: Probe["body"][] = reads ? [] : [
    ...(json || !form ? hostileBodies(json ? sample(world, json) : {}, json) : []).map((b) => ({
      type: "json" as const,
      text: JSON.stringify(b),
    })),
    ...(form ? hostileForms(sample(world, form), form) : []).map((text) => ({
      type: "form" as const,
      text,
    })),
  ];
  // The path's and the query's probes carry the plain body, so a form's CSRF token holds.
  const plain = bodies[0];
  const probes: Probe[] = [];
  const add = (what: string, p: Partial<Probe>) =>
    probes.push({
      what: `${method} ${pattern} ${what}`,
      method,
      path: pathOf(world, pattern),
      body: plain,
      ...p,
    });
  // The plain body goes last: it may end the record (a modal submitted is closed).
  for (const body of bodies.slice(1)) add(`${body!.type} ${body!.text.slice(0, 120)}`, { body });
  for (const [, name] of pattern.matchAll(PARAM)) {
    for (const h of HOSTILE) {
      add(`:${name}=${JSON.stringify(h)}`, { path: pathOf(world, pattern, { name, hostile: h }) });
    }
  }
  for (const h of HOSTILE) add(`?${JSON.stringify(h)}`, { query: `${enc(h)}=${enc(h)}` });
  for (const q of query) {
    for (const h of HOSTILE) add(`?${q}=${JSON.stringify(h)}`, { query: `${q}=${enc(h)}` });
  }
  if (plain) add(`${plain.type} ${plain.text.slice(0, 120)}`, {});
  return probes;
}

let addresses = 0;

/** The credentials each surface takes: a bearer token, or the screen's session and CSRF token. */
function requestOf(world: HostileWorld, probe: Probe): Request {
  const headers = new Headers({ Origin: world.s.url });
  const text = probe.body?.text;
  if (probe.path.startsWith("/api/slack/apps.connections.open")) {
    headers.set("Authorization", `Bearer ${world.tokens.appLevel}`);
  } else if (probe.path.startsWith("/api/slack/")) {
    headers.set("Authorization", `Bearer ${world.tokens.appBot}`);
  } else if (probe.path.startsWith("/api/")) {
    headers.set("Authorization", `Bearer ${world.tokens.admin}`);
  } else if (probe.path.startsWith("/settings/") || probe.path.startsWith("/oauth/authorize")) {
    headers.set("Cookie", world.session.cookie);
  }
  headers.set("X-Forwarded-For", `10.${addresses++ % 250}.${Math.floor(addresses / 250) % 250}.1`);
  if (probe.body) {
    headers.set(
      "Content-Type",
      probe.body.type === "json" ? "application/json" : "application/x-www-form-urlencoded",
    );
  }
  const url = `${world.s.url}${probe.path}${probe.query ? `?${probe.query}` : ""}`;
  return new Request(url, { method: probe.method, headers, body: text });
}

/** Sends the probes a few at a time; the failures, each named. */
async function send(world: HostileWorld, probes: Probe[]): Promise<string[]> {
  const failures: string[] = [];
  const queue = [...probes];
  const worker = async () => {
    for (let probe = queue.shift(); probe; probe = queue.shift()) {
      try {
        const res = await fetch(requestOf(world, probe), { redirect: "manual" });
        const text = res.status >= 500 ? await res.text() : (await res.body?.cancel(), "");
        if (res.status >= 500) failures.push(`${probe.what}: ${res.status} ${text.slice(0, 200)}`);
      } catch (e) {
        failures.push(`${probe.what}: ${(e as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 6 }, worker));
  return failures;
}

Deno.test("hostile names and control characters, at every input of every route: no 5xx, no prototype changed", async () => {
  const world = await hostileWorld();
  try {
    const before = snapshot();
    const failures: string[] = [];
    let sent = 0;
    for (const op of operations(world)) {
      const probes = probesOf(world, op);
      sent += probes.length;
      failures.push(...await send(world, probes));
      assert.deepEqual(changedSince(before), [], `${op.method} ${op.pattern} changed a prototype`);
    }
    assert.deepEqual(failures.slice(0, 30), [], `${failures.length} of ${sent} requests failed`);
    const up = await fetch(`${world.s.url}/up`);
    assert.equal(up.status, 200);
    await up.body?.cancel();
  } finally {
    await world.close();
  }
});

Deno.test("hostile Socket Mode frames: the connection is refused or closed, the service untouched", async () => {
  const world = await hostileWorld();
  try {
    const before = snapshot();
    const frames = [
      ...CONTROL_TEXTS,
      "not json",
      "[]",
      "null",
      "1",
      ...HOSTILE.flatMap((h) => [
        JSON.stringify({ envelope_id: h }),
        JSON.stringify({ envelope_id: h, payload: { [h]: h } }),
        JSON.stringify({ [h]: h, type: h }),
        JSON.stringify({ envelope_id: h, payload: { response_action: h, errors: { [h]: h } } }),
      ]),
    ];
    const opened = await fetch(`${world.s.url}/api/slack/apps.connections.open`, {
      method: "POST",
      headers: { Authorization: `Bearer ${world.tokens.appLevel}` },
    }).then((r) => r.json());
    const ws = new WebSocket(opened.url);
    const closed = new Promise((done) => ws.addEventListener("close", done));
    await new Promise((open) => ws.addEventListener("open", open));
    for (const frame of frames) if (ws.readyState === WebSocket.OPEN) ws.send(frame);
    ws.close();
    await closed;
    assert.deepEqual(changedSince(before), []);
    const channels = await fetch(`${world.s.url}/api/v1/channels`, {
      headers: { Authorization: `Bearer ${world.tokens.admin}` },
    });
    await channels.body?.cancel();
    assert.equal(channels.status, 200);
  } finally {
    await world.close();
  }
});

Deno.test("a header a request named goes out percent-encoded; one no route made safe, too", async () => {
  const world = await hostileWorld();
  const guarded = new Hono().use(headerGuard()).get("/", (c) => {
    c.header("X-Echo", "a\x01b\x7f");
    return c.text("ok");
  });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, guarded.fetch);
  try {
    const res = await fetch(`${world.s.url}/api/v1/channels?%01=1&a%2Cb=2&%25=3&caf%C3%A9=4`, {
      headers: { Authorization: `Bearer ${world.tokens.admin}` },
    });
    await res.body?.cancel();
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("X-Ignored-Fields"), "%01, a%2Cb, %25, caf%C3%A9");
    const echoed = await fetch(`http://127.0.0.1:${server.addr.port}/`);
    assert.equal(await echoed.text(), "ok");
    assert.equal(echoed.headers.get("X-Echo"), "a%01b%7F");
  } finally {
    await server.shutdown();
    await world.close();
  }
});
