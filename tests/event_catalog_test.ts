/**
 * The event catalog: `GET /api/v1/event-types` serves every type with a strict JSON Schema
 * (2020-12) and an example that matches it; openapi.yaml and docs/webhooks.md hold what the
 * catalog makes; and a real delivery of every type, read by a receiver that knows only the
 * catalog it fetched, validates against its type's schema.
 */
import assert from "node:assert/strict";
import { docsWithCatalog, openapiWithCatalog, sameProse } from "../cli/catalog.ts";
import { actor, api, assertStatus, createChannelAs, withWorkspace } from "./harness.ts";
import { catalogValidators } from "./event_schema_check.ts";
import { FAST, post, receiver, subscribe, waitUntil } from "./webhook_receivers.ts";

const read = (path: string) => Deno.readTextFile(new URL(`../${path}`, import.meta.url));

interface Entry {
  type: string;
  description: string;
  schema: { $schema: string };
  example: { type: string; data: unknown };
  added_in: string;
}

Deno.test("event catalog: any token reads it; each example matches its own strict schema", async () => {
  await withWorkspace(async (s, w) => {
    const bare = await actor(s.ctx, w.team, "Reactions Only", "member", ["reactions:write"]);
    const res = await api(s, "GET", "/event-types", { token: bare.token });
    assertStatus(res, 200);
    const catalog = res.body.data as Entry[];
    assert.deepEqual(catalog.map((e) => e.type), [
      "message.created",
      "message.updated",
      "message.deleted",
      "reaction.added",
      "channel.member_added",
      "poll.vote_added",
      "poll.vote_removed",
      "poll.closed",
      "ping",
    ]);
    const checks = catalogValidators(catalog);
    for (const entry of catalog) {
      assert.equal(entry.schema.$schema, "https://json-schema.org/draft/2020-12/schema");
      assert.match(entry.added_in, /^\d+\.\d+\.\d+$/);
      assert.ok(entry.description.length > 10, entry.type);
      assert.equal(entry.example.type, entry.type);
      const check = checks.get(entry.type)!;
      assert.ok(check(entry.example), `${entry.type}: ${JSON.stringify(check.errors)}`);
      // Not a schema that takes anything: a field nobody sends, or a type's data missing, fails.
      const stray = { ...entry.example, data: { ...entry.example.data as object, stray: 1 } };
      assert.equal(check(stray), false, `${entry.type} refuses an unknown field`);
      assert.equal(check({ ...entry.example, data: {} }), false, `${entry.type} needs its data`);
    }
    assertStatus(await api(s, "GET", "/event-types", { token: "nope" }), 401);
  });
});

Deno.test("event catalog: openapi.yaml and docs/webhooks.md hold what the catalog makes", async () => {
  const openapi = await read("openapi.yaml");
  assert.ok(openapiWithCatalog(openapi) === openapi, "openapi.yaml: run deno task catalog");
  const docs = await read("docs/webhooks.md");
  assert.ok(sameProse(docsWithCatalog(docs), docs), "docs/webhooks.md: run deno task catalog");
});

Deno.test("event catalog: a real delivery of every type validates against the fetched catalog", async () => {
  const r = receiver();
  await withWorkspace(
    async (s, w) => {
      const catalog = (await api(s, "GET", "/event-types", { token: w.admin.token })).body
        .data as Entry[];
      const checks = catalogValidators(catalog);
      const channel = await createChannelAs(s, w.admin.token, "catalog");
      const events = catalog.map((e) => e.type).filter((t) => t !== "ping");
      const sub = await subscribe(s, w.admin.token, r.url, { events });
      const at = `/channels/${channel}/messages`;
      const said = await post(s, w.admin.token, channel, "Hello <@" + w.member.user.id + ">");
      const as = { token: w.admin.token };
      await api(s, "PATCH", `${at}/${said.id}`, { ...as, body: { body: "Hello again" } });
      assertStatus(
        await api(s, "PUT", `${at}/${said.id}/reactions/${encodeURIComponent("🎉")}`, as),
        204,
      );
      await api(s, "DELETE", `${at}/${said.id}`, as);
      await api(s, "POST", `/channels/${channel}/members`, {
        ...as,
        body: { user_id: w.bot.user.id },
      });
      const poll = (await api(s, "POST", at, {
        ...as,
        body: { body: "Tea or coffee?", poll: { options: ["Tea", "Coffee"] } },
      })).body.data.id;
      await api(s, "PUT", `${at}/${poll}/votes/1`, as);
      await api(s, "DELETE", `${at}/${poll}/votes/1`, as);
      await api(s, "POST", `${at}/${poll}/close`, as);
      // A test send delivers the catalog's example: a ping, and an example of an event type.
      assertStatus(await api(s, "POST", `/webhooks/${sub.id}/test`, as), 202);
      const example = { ...as, body: { event_type: "poll.closed" } };
      assertStatus(await api(s, "POST", `/webhooks/${sub.id}/test`, example), 202);
      const typeOf = (body: string): string => JSON.parse(body).type;
      const seen = () => new Set(r.hits.map((hit) => typeOf(hit.body)));
      await waitUntil(
        () => seen().size === catalog.length,
        15_000,
        () => `every type (got ${[...seen()].join(", ")})`,
      );
      for (const hit of r.hits) {
        const check = checks.get(typeOf(hit.body))!;
        assert.ok(check(JSON.parse(hit.body)), `${JSON.stringify(check.errors)} in ${hit.body}`);
      }
    },
    FAST,
    { engine: true },
  );
  await r.close();
});
