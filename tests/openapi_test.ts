import assert from "node:assert/strict";
import { parse } from "npm:yaml@2.9.1";
import { SCOPES } from "../core/types.ts";
import { VERSION } from "../core/version.ts";
import { SLACK_METHODS } from "../routes/slack/web_api.ts";
import { startServer } from "./harness.ts";
import { checkEvent, checkResponse, matchPath, openApi, validatorAt } from "./openapi_check.ts";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const CHANNEL = "0190f5f0-6b1a-7c3e-9a4b-1234567890ab";
const MESSAGE = "0190f5f0-6b1a-7c3e-9a4b-1234567890ac";

/** interface.md §4 plus the additions in decisions.md: every operation and its one scope. */
/** Operations any token may call, whatever scopes it holds: no 403 to document. */
const ANY_TOKEN = ["GET /event-types"];

/** Method, path, and the one scope it needs (an empty string for ANY_TOKEN's). */
const CONTRACT: [string, string, string][] = [
  ["get", "/channels", "channels:read"],
  ["post", "/channels", "channels:write"],
  ["get", "/channels/{channel}", "channels:read"],
  ["patch", "/channels/{channel}", "channels:write"],
  ["post", "/channels/{channel}/archive", "channels:write"],
  ["post", "/channels/{channel}/unarchive", "channels:write"],
  ["get", "/channels/{channel}/messages", "messages:read"],
  ["post", "/channels/{channel}/messages", "messages:write"],
  ["get", "/channels/{channel}/messages/{message}", "messages:read"],
  ["patch", "/channels/{channel}/messages/{message}", "messages:write"],
  ["delete", "/channels/{channel}/messages/{message}", "messages:write"],
  ["put", "/channels/{channel}/messages/{message}/reactions/{emoji}", "reactions:write"],
  ["delete", "/channels/{channel}/messages/{message}/reactions/{emoji}", "reactions:write"],
  ["get", "/channels/{channel}/members", "members:read"],
  ["post", "/channels/{channel}/members", "members:write"],
  ["delete", "/channels/{channel}/members/{user}", "members:write"],
  ["get", "/webhooks", "webhooks:read"],
  ["post", "/webhooks", "webhooks:write"],
  ["get", "/webhooks/{webhookSubscription}", "webhooks:read"],
  ["delete", "/webhooks/{webhookSubscription}", "webhooks:write"],
  ["post", "/webhooks/{webhookSubscription}/deliveries/{delivery}/redeliver", "webhooks:write"],
  ["patch", "/webhooks/{webhookSubscription}", "webhooks:write"],
  ["post", "/webhooks/{webhookSubscription}/test", "webhooks:write"],
  ["post", "/webhooks/{webhookSubscription}/recover", "webhooks:write"],
  ["get", "/events", "messages:read"],
  ["get", "/events/stream", "messages:read"],
  ["get", "/commands", "messages:write"],
  ["get", "/event-types", ""],
  ["post", "/channels/{channel}/commands", "messages:write"],
  ["put", "/channels/{channel}/messages/{message}/votes/{option}", "reactions:write"],
  ["delete", "/channels/{channel}/messages/{message}/votes/{option}", "reactions:write"],
  ["get", "/channels/{channel}/messages/{message}/votes/{option}", "messages:read"],
  ["post", "/channels/{channel}/messages/{message}/close", "messages:write"],
  ["post", "/channels/{channel}/messages/{message}/actions", "messages:write"],
  ["get", "/views/{view}", "messages:read"],
  ["post", "/views/{view}/submit", "messages:write"],
  ["post", "/views/{view}/actions", "messages:write"],
  ["get", "/apps/{app}/home", "messages:read"],
  ["post", "/apps/{app}/threads", "messages:write"],
  ["get", "/apps/{app}/threads/{thread_ts}", "messages:read"],
  ["put", "/apps/{app}/threads/{thread_ts}/context", "messages:write"],
  ["put", "/apps/{app}/context", "messages:write"],
  ["get", "/shortcuts", "messages:write"],
  ["post", "/ephemeral/{id}/actions", "messages:write"],
  ["get", "/views/{view}/options", "messages:write"],
  ["get", "/channels/{channel}/messages/{message}/options", "messages:write"],
  ["post", "/apps/{app}/shortcuts/{callback_id}", "messages:write"],
  ["post", "/channels/{channel}/messages/{message}/shortcuts", "messages:write"],
  ["post", "/views/{view}/close", "messages:write"],
  ["patch", "/users/{user}", "members:write"],
];

/**
 * Operations outside the token scheme: the index, the probe, the metrics (their own token), this
 * document and its reference page, incoming webhooks (whose URL is the credential), OAuth
 * (a session or the app's client credentials), and the operator's admin path (signed with APP_KEY).
 */
const PUBLIC = new Set([
  "/",
  "/up",
  "/metrics",
  "/openapi.yaml",
  "/docs",
  "/docs/{file}",
  "/.well-known/oauth-authorization-server",
  "/oauth/authorize",
  "/oauth/token",
  "/oauth/revoke",
  "/hooks/{secret}",
  "/responses/{secret}",
  "/admin/v1/{command}",
]);

// deno-lint-ignore no-explicit-any
type Json = any;

/** The settings screen's pages and forms: a session cookie, not a token. */
const isSettings = (path: string) => path.startsWith("/settings/");

/** Slack's Web API: its own server, and Slack's answers. */
const isSlack = (item: Json) => item.servers?.[0]?.url === "/api/slack";

/** Every operation of the REST API that takes a token. */
function operations(): { path: string; method: string; op: Json }[] {
  const out = [];
  for (const [path, item] of Object.entries<Json>(openApi().doc.paths)) {
    if (PUBLIC.has(path) || isSettings(path) || isSlack(item)) continue;
    for (const method of METHODS) if (item[method]) out.push({ path, method, op: item[method] });
  }
  return out;
}

function channel(overrides: Record<string, unknown> = {}) {
  return {
    id: CHANNEL,
    name: "general",
    slug: "general",
    visibility: "public",
    topic: null,
    is_general: true,
    is_archived: false,
    is_direct: false,
    created_at: "2024-07-01T12:00:00.000Z",
    ...overrides,
  };
}

Deno.test("openapi: the document is OpenAPI 3.1 with the API under /api/v1", () => {
  const { doc } = openApi();
  assert.match(doc.openapi, /^3\.1\./);
  assert.deepEqual(doc.servers, [{ url: "/api/v1" }]);
  assert.deepEqual(doc.components.securitySchemes.bearerAuth, {
    ...doc.components.securitySchemes.bearerAuth,
    type: "http",
    scheme: "bearer",
  });
  assert.deepEqual(doc.paths["/up"].servers, [{ url: "/" }]);
  assert.deepEqual(doc.paths["/up"].get.security, []);
  assert.deepEqual(doc.paths["/openapi.yaml"].get.security, []);
  // The reference page shows it: the service's own version, as `GET /` gives it.
  assert.equal(doc.info.version, VERSION);
});

Deno.test("openapi: every API operation requires exactly one scope", () => {
  for (const { path, method, op } of operations()) {
    const where = `${method.toUpperCase()} ${path}`;
    assert.equal(op.security?.length, 1, `${where}: one security requirement`);
    const [requirement] = op.security;
    assert.deepEqual(Object.keys(requirement), ["bearerAuth"], where);
    if (ANY_TOKEN.includes(where)) {
      assert.deepEqual(requirement.bearerAuth, [], `${where}: any token`);
      continue;
    }
    assert.equal(requirement.bearerAuth.length, 1, `${where}: one scope`);
    assert.ok(SCOPES.includes(requirement.bearerAuth[0]), `${where}: known scope`);
  }
});

Deno.test("openapi: every operation of the contract is documented with its scope", () => {
  const { doc } = openApi();
  for (const [method, path, scope] of CONTRACT) {
    const op = doc.paths[path]?.[method];
    assert.ok(op, `${method.toUpperCase()} ${path} is documented`);
    const scopes = scope ? [scope] : [];
    assert.deepEqual(op.security, [{ bearerAuth: scopes }], `${method.toUpperCase()} ${path}`);
  }
  assert.equal(operations().length, CONTRACT.length, "no operation beyond the contract");
});

Deno.test("openapi: the settings screen is HTML behind a session, outside /api/v1", () => {
  const settings = Object.entries<Json>(openApi().doc.paths).filter(([path]) => isSettings(path));
  assert.ok(settings.length >= 15, "every page and form is described");
  for (const [path, item] of settings) {
    assert.deepEqual(item.servers, [{ url: "/" }], path);
    for (const method of METHODS.filter((m) => item[m])) {
      const op = item[method];
      const where = `${method.toUpperCase()} ${path}`;
      const open = path === "/settings/login/{secret}" || path === "/settings/assets/{file}";
      const expected = open ? [] : [{ settingsSession: [] }];
      assert.deepEqual(op.security, expected, where);
      if (method === "post") {
        assert.ok(op.responses["403"], `${where}: refused without the CSRF token`);
        assert.ok(op.requestBody, `${where}: a form`);
      }
    }
  }
});

Deno.test("openapi: statuses follow decisions.md", () => {
  for (const { path, method, op } of operations()) {
    const where = `${method.toUpperCase()} ${path}`;
    const codes = Object.keys(op.responses);
    const refusals = ANY_TOKEN.includes(where)
      ? ["401", "404", "429"]
      : ["401", "403", "404", "429"];
    for (const code of refusals) assert.ok(codes.includes(code), where + code);
    const success = codes.filter((c) => c.startsWith("2"));
    const noContent = method === "delete" || path === "/views/{view}/close" ||
      (method === "put" && /\/(reactions|votes)\//.test(path));
    if (noContent) {
      assert.deepEqual(success, ["204"], where);
    } else if (method === "post" && (path === "/channels" || path.endsWith("/members"))) {
      assert.deepEqual(success, ["201"], where);
    } else if (method === "post" && (path === "/webhooks" || path.endsWith("/threads"))) {
      assert.deepEqual(success, ["201"], where);
    } else if (method === "post" && path.endsWith("/messages")) {
      assert.deepEqual(success.sort(), ["200", "201"], where);
    } else if (/\/(redeliver|test|recover)$/.test(path)) {
      assert.deepEqual(success, ["202"], where);
    } else {
      assert.deepEqual(success, ["200"], where);
    }
    assert.equal(codes.includes("413"), Boolean(op.requestBody), `${where}: 413 iff a body`);
    if (op.requestBody) assert.ok(codes.includes("422"), `${where}: 422 with a body`);
  }
});

Deno.test("openapi: the Slack Web API is one group, each method answering 200 or 429 (404 with the platform off)", () => {
  const slack = Object.entries<Json>(openApi().doc.paths).filter(([, item]) => isSlack(item));
  assert.deepEqual(slack.map(([path]) => path.slice(1)).sort(), [...SLACK_METHODS]);
  for (const [path, item] of slack) {
    assert.deepEqual(Object.keys(item).filter((k) => METHODS.includes(k)), ["post"], path);
    const op = item.post;
    assert.deepEqual(op.tags, ["slack"], path);
    assert.deepEqual(Object.keys(op.responses).sort(), ["200", "404", "429"], path);
    // An app-level token opens Socket Mode connections and calls nothing else.
    if (path === "/apps.connections.open") {
      assert.deepEqual(op.security, [{ appLevelToken: ["connections:write"] }]);
      continue;
    }
    const scopes = op.security[0].bearerAuth;
    assert.ok(scopes.length <= 1 && scopes.every((s: string) => SCOPES.includes(s as never)), path);
  }
});

Deno.test("openapi: incoming webhooks are public, answer as Slack (or 201 JSON), their own errors and a refused signature's 401", () => {
  const op = openApi().doc.paths["/hooks/{secret}"].post;
  assert.deepEqual(op.security, []);
  assert.deepEqual(Object.keys(op.responses).sort(), [
    "200",
    "201",
    "400",
    "401",
    "403",
    "404",
    "410",
    "413",
    "422",
    "429",
    "503",
  ]);
  // Slack's refusals in plain text beside the JSON ones.
  for (const status of ["400", "403", "404", "410", "413"]) {
    assert.ok(op.responses[status].content["text/plain"], `${status} in plain text`);
  }
  assert.deepEqual(Object.keys(op.requestBody.content).sort(), [
    "application/json",
    "application/x-www-form-urlencoded",
    "multipart/form-data",
  ]);
});

Deno.test("openapi: every $ref resolves", () => {
  const { doc } = openApi();
  const refs: string[] = [];
  const walk = (node: Json) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== "object") return;
    if (typeof node.$ref === "string") refs.push(node.$ref);
    Object.values(node).forEach(walk);
  };
  walk(doc);
  assert.ok(refs.length > 50);
  for (const ref of refs) {
    assert.ok(ref.startsWith("#/"), ref);
    let target: Json = doc;
    for (const part of ref.slice(2).split("/")) target = target?.[part];
    assert.ok(target !== undefined, `unresolved ${ref}`);
  }
  for (const name of Object.keys(doc.components.schemas)) {
    validatorAt(`/components/schemas/${name}`);
  }
});

Deno.test("openapi: each event type has a webhook entry whose envelope matches it", () => {
  const { doc } = openApi();
  const types = doc.components.schemas.EventType.enum;
  assert.deepEqual(Object.keys(doc.webhooks).sort(), [...types, "ping"].sort());
  for (const type of [...types, "ping"]) {
    const post = doc.webhooks[type].post;
    const ref = post.requestBody.content["application/json"].schema.$ref;
    const schema = doc.components.schemas[ref.split("/").pop()];
    assert.equal(schema.properties.type.const, type);
    assert.deepEqual(schema.required, ["id", "type", "created_at", "data"]);
    const headers = post.parameters.map((p: Json) => p.$ref.split("/").pop());
    assert.deepEqual(headers, [
      "X-Service-Event",
      "X-Service-Delivery",
      "X-Service-Signature",
      "webhook-id",
      "webhook-timestamp",
      "webhook-signature",
    ]);
  }
});

Deno.test("openapi check: event envelopes are checked against the webhooks section", () => {
  const user = { id: MESSAGE, name: "Robo Bot", type: "bot" };
  const envelope = {
    id: "0190f5f0-6b1a-7c3e-9a4b-1234567890ad",
    type: "channel.member_added",
    created_at: "2024-07-01T12:00:00.000Z",
    data: { channel_id: CHANNEL, user },
  };
  checkEvent(envelope);
  assert.throws(() => checkEvent({ ...envelope, type: "reaction.added" }), /message_id/);
  assert.throws(() => checkEvent({ ...envelope, type: "channel.created" }), /no webhooks entry/);
  assert.throws(() => checkEvent({ ...envelope, data: { channel_id: CHANNEL } }), /user/);
});

Deno.test("openapi check: path matching prefers literal segments and strips the query", () => {
  assert.equal(
    matchPath(`/api/v1/channels/${CHANNEL}/archive`)?.path,
    "/channels/{channel}/archive",
  );
  assert.equal(matchPath(`/api/v1/channels/${CHANNEL}?page=2`)?.path, "/channels/{channel}");
  assert.equal(
    matchPath(`/api/v1/channels/${CHANNEL}/messages/${MESSAGE}/reactions/%F0%9F%91%8D`)?.path,
    "/channels/{channel}/messages/{message}/reactions/{emoji}",
  );
  assert.equal(matchPath("/up")?.path, "/up");
  assert.equal(matchPath("/api/v1/up"), undefined);
  assert.equal(matchPath("/channels"), undefined);
});

Deno.test("openapi check: accepts documented answers", () => {
  checkResponse("GET", `/api/v1/channels/${CHANNEL}`, 200, { data: channel() });
  checkResponse("POST", `/api/v1/channels/${CHANNEL}/archive`, 200, {
    data: channel({ is_archived: true }),
  });
  checkResponse("DELETE", `/api/v1/channels/${CHANNEL}/messages/${MESSAGE}`, 204, null);
  checkResponse("POST", "/api/v1/channels", 422, {
    message: "The name is required.",
    errors: { name: ["The name is required."] },
  });
  checkResponse("GET", "/api/v1/nope", 404, { message: "Not found." });
  checkResponse("GET", "/up", 200, { status: "ok" });
});

Deno.test("openapi check: rejects drift", () => {
  const { slug: _, ...noSlug } = channel();
  assert.throws(
    () => checkResponse("GET", `/api/v1/channels/${CHANNEL}`, 200, { data: noSlug }),
    /slug/,
  );
  assert.throws(
    () => checkResponse("GET", `/api/v1/channels/${CHANNEL}`, 200, { data: channel({ x: 1 }) }),
    /additional/,
  );
  assert.throws(
    () => checkResponse("GET", `/api/v1/channels/${CHANNEL}`, 200, { data: channel({ id: "1" }) }),
    /uuid/,
  );
  assert.throws(
    () => checkResponse("GET", `/api/v1/channels/${CHANNEL}`, 201, { data: channel() }),
    /status 201 is not documented/,
  );
  assert.throws(
    () => checkResponse("DELETE", `/api/v1/channels/${CHANNEL}/messages/${MESSAGE}`, 204, {}),
    /no body/,
  );
  assert.throws(
    () => checkResponse("POST", "/api/v1/channels", 422, { message: "Invalid." }),
    /errors/,
  );
  assert.throws(() => checkResponse("GET", "/api/v1/nope", 200, {}), /no operation/);
  assert.throws(() => checkResponse("PUT", "/api/v1/channels", 200, {}), /no operation/);
  assert.throws(
    () => checkResponse("GET", `/api/v1/channels/${CHANNEL}`, 500, { message: "boom" }),
    /not documented/,
  );
});

Deno.test("openapi: GET /api/v1/openapi.yaml serves this document, without a token", async () => {
  const s = await startServer();
  try {
    const res = await fetch(`${s.url}/api/v1/openapi.yaml`);
    const text = await res.text();
    checkResponse("GET", "/api/v1/openapi.yaml", res.status, text);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("Content-Type") ?? "", /yaml/);
    assert.deepEqual(parse(text), openApi().doc);
  } finally {
    await s.close();
  }
});

Deno.test("openapi: the document is hidden when the platform is off", async () => {
  const s = await startServer({ INTEGRATIONS_ENABLED: "false" });
  try {
    const res = await fetch(`${s.url}/api/v1/openapi.yaml`);
    const body = await res.json();
    checkResponse("GET", "/api/v1/openapi.yaml", res.status, body);
    assert.equal(res.status, 404);
  } finally {
    await s.close();
  }
});
