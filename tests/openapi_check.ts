/**
 * Checks real responses against openapi.yaml, so a test fails the moment the service and its
 * document disagree. The document is loaded once; each response schema is compiled once.
 */
import { Ajv2020 } from "npm:ajv@8.20.0/dist/2020.js";
import formats from "npm:ajv-formats@3.0.1";
import { parse } from "npm:yaml@2.9.1";

const DOC_ID = "https://team-chat.invalid/openapi.yaml";
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** Error statuses the middleware in front of routing may give to a path no route serves. */
const UNROUTED_STATUSES = new Set([401, 404, 405, 413, 429]);

// deno-lint-ignore no-explicit-any
type Json = any;

interface Template {
  path: string;
  segments: string[];
  item: Json;
}

export interface OpenApi {
  doc: Json;
  templates: Template[];
}

let loaded: OpenApi | undefined;
const validators = new Map<string, (body: unknown) => boolean>();
let ajv: Ajv2020 | undefined;

/** The parsed document and its path templates with their full (server-prefixed) paths. */
export function openApi(): OpenApi {
  if (loaded) return loaded;
  const text = Deno.readTextFileSync(new URL("../openapi.yaml", import.meta.url));
  const doc = parse(text);
  const rootServer = doc.servers?.[0]?.url ?? "";
  const templates = Object.entries<Json>(doc.paths ?? {}).map(([path, item]) => {
    const server = (item.servers?.[0]?.url ?? rootServer).replace(/\/+$/, "");
    return { path, segments: `${server}${path}`.split("/").slice(1), item };
  });
  loaded = { doc, templates };
  return loaded;
}

function compiler() {
  if (ajv) return ajv;
  ajv = new Ajv2020({ allErrors: true, strict: false });
  // The CommonJS module is the plugin itself and also carries it as `default`, which types see.
  formats.default(ajv);
  ajv.addSchema({ ...openApi().doc, $id: DOC_ID });
  return ajv;
}

const escapePointer = (s: string) => s.replaceAll("~", "~0").replaceAll("/", "~1");

/** A validator for the schema at a JSON pointer into the document, compiled on first use. */
export function validatorAt(pointer: string): (body: unknown) => boolean {
  let v = validators.get(pointer);
  if (!v) {
    v = compiler().compile({ $ref: `${DOC_ID}#${pointer}` }) as (body: unknown) => boolean;
    validators.set(pointer, v);
  }
  return v;
}

/** Literal segments beat `{param}` ones, compared left to right. */
function specificity(a: Template, b: Template): number {
  for (let i = 0; i < a.segments.length; i++) {
    const pa = a.segments[i].startsWith("{");
    const pb = b.segments[i].startsWith("{");
    if (pa !== pb) return pa ? 1 : -1;
  }
  return 0;
}

/** The template a concrete path (query allowed) matches best, if any. */
export function matchPath(concrete: string): Template | undefined {
  const segments = concrete.split(/[?#]/)[0].split("/").slice(1);
  const candidates = openApi().templates.filter((t) =>
    t.segments.length === segments.length &&
    t.segments.every((s, i) => (s.startsWith("{") ? segments[i] !== "" : s === segments[i]))
  );
  return candidates.sort(specificity)[0];
}

/** Follows a local `$ref` (one level is all the document uses for responses). */
function deref(node: Json): { node: Json; pointer: string | null } {
  const ref = node?.$ref as string | undefined;
  if (!ref) return { node, pointer: null };
  if (!ref.startsWith("#/")) {
    throw new Error(`openapi.yaml: only local $refs are supported: ${ref}`);
  }
  let target: Json = openApi().doc;
  for (const part of ref.slice(2).split("/")) {
    target = target?.[part.replaceAll("~1", "/").replaceAll("~0", "~")];
  }
  if (target === undefined) throw new Error(`openapi.yaml: unresolved $ref ${ref}`);
  return { node: target, pointer: ref.slice(1) };
}

function describeErrors(errors: Json[] | null | undefined): string {
  return (errors ?? []).slice(0, 8)
    .map((e) =>
      `${e.instancePath || "(root)"} ${e.message}${
        e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ""
      }`
    )
    .join("; ");
}

function validateBody(pointer: string, body: unknown, what: string) {
  const validate = validatorAt(pointer) as ((b: unknown) => boolean) & { errors?: Json[] };
  if (!validate(body)) {
    throw new Error(
      `${what}: body does not match openapi.yaml (${pointer}): ${
        describeErrors(validate.errors)
      }\nbody: ${JSON.stringify(body).slice(0, 2000)}${failingItem(body, validate.errors)}`,
    );
  }
}

/** The item of a list the first error is in (`/data/15`), whole: a long body's cut hides it. */
function failingItem(body: unknown, errors: Json[] | null | undefined): string {
  const path = String(errors?.[0]?.instancePath ?? "").split("/").slice(1, 3);
  if (path.length < 2) return "";
  let at: Json = body;
  for (const part of path) at = at?.[part];
  return `\nat /${path.join("/")}: ${JSON.stringify(at)}`;
}

function statusEntry(responses: Json, status: number): string | undefined {
  const code = String(status);
  if (code in responses) return code;
  const range = `${code[0]}XX`;
  if (range in responses) return range;
  return "default" in responses ? "default" : undefined;
}

/**
 * Throws when `method path` answering `status` with `body` is not what openapi.yaml describes:
 * an undocumented operation or status, a body that fails its schema, or a body where none is
 * documented. `path` is the request path as sent (e.g. `/api/v1/channels/<id>?page=2`); `body`
 * is the parsed JSON, or null for an empty body.
 *
 * A path or method no operation serves may only answer what the middleware before routing
 * answers (401, 404, 405, 413, 429) with an Error body: unknown paths under /api/v1 are 404 JSON,
 * a known path's other methods 405.
 */
export function checkResponse(method: string, path: string, status: number, body: unknown): void {
  const what = `${method.toUpperCase()} ${path} → ${status}`;
  const template = matchPath(path);
  const key = method.toLowerCase();
  const op = template?.item[key];
  if (!template || !op || !METHODS.includes(key)) {
    if (!UNROUTED_STATUSES.has(status)) {
      throw new Error(`${what}: no operation in openapi.yaml for ${method.toUpperCase()} ${path}`);
    }
    validateBody("/components/schemas/Error", body, what);
    return;
  }
  const responses = op.responses ?? {};
  const code = statusEntry(responses, status);
  if (!code) {
    throw new Error(
      `${what}: status ${status} is not documented for ${method.toUpperCase()} ${template.path} ` +
        `(documented: ${Object.keys(responses).join(", ")})`,
    );
  }
  const { node: response, pointer } = deref(responses[code]);
  const base = pointer ??
    `/paths/${escapePointer(template.path)}/${key}/responses/${escapePointer(code)}`;
  const json = response.content?.["application/json"];
  if (!response.content) {
    if (body !== null && body !== undefined && body !== "") {
      throw new Error(`${what}: openapi.yaml documents no body, got ${JSON.stringify(body)}`);
    }
    return;
  }
  if (!json) return;
  // An answer documented both ways (a settings page, or JSON with the platform off; Slack's plain
  // text, or JSON for a client that asks): a body that is not JSON (callers pass null) is the other.
  const other = response.content["text/html"] ?? response.content["text/plain"];
  const page = other && (body === null || body === undefined);
  if (!page) validateBody(`${base}/content/application~1json/schema`, body, what);
}

/**
 * Throws unless `body` is a delivery envelope that openapi.yaml's `webhooks` section documents
 * for its `type`. For tests of outgoing webhooks, on the parsed body a receiver got.
 */
export function checkEvent(body: unknown): void {
  const type = (body as { type?: unknown } | null)?.type;
  const entry = typeof type === "string" ? openApi().doc.webhooks?.[type]?.post : undefined;
  if (!entry) throw new Error(`event: no webhooks entry in openapi.yaml for type ${String(type)}`);
  validateBody(
    `/webhooks/${escapePointer(type as string)}/post/requestBody/content/application~1json/schema`,
    body,
    `event ${type}`,
  );
}
