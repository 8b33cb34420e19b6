/**
 * Polls, the interface's `poll` message type (decisions.md, "Polls"): posting one, voting and
 * taking a vote back (a single-choice vote moves), voters by page, closing, the events, and
 * counts that stay exact with many voters at once on two real instances.
 */
import assert from "node:assert/strict";
import { checkResponse } from "./openapi_check.ts";
import {
  actor,
  api,
  assertInvalid,
  assertStatus,
  startServer,
  type TestServer,
  workspace,
} from "./harness.ts";
import { setVote } from "../domain/messages/polls.ts";
import { keys } from "../kv/keys.ts";
import { sharedStore, startService } from "./processes.ts";
import { receiver, subscribe, waitUntil } from "./webhook_receivers.ts";

const optionsOf = (body: { data: { poll: { options: { id: string; count: number }[] } } }) =>
  Object.fromEntries(body.data.poll.options.map((o) => [o.id, o.count]));

async function postPoll(
  s: TestServer,
  { token, channel, options = ["Tea", "Coffee"], multiple }: {
    token: string;
    channel: string;
    options?: string[];
    multiple?: boolean;
  },
) {
  return await api(s, "POST", `/channels/${channel}/messages`, {
    token,
    body: { body: "Tea or coffee?", poll: { options, ...(multiple ? { multiple } : {}) } },
  });
}

Deno.test("polls: a poll is a message of type poll; its options are checked", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const channel = w.team.general_channel_id;
    const made = await postPoll(s, { token: w.member.token, channel });
    assertStatus(made, 201);
    assert.equal(made.body.data.type, "poll");
    assert.equal(made.body.data.body, "Tea or coffee?");
    assert.deepEqual(made.body.data.poll, {
      options: [{ id: "1", text: "Tea", count: 0 }, { id: "2", text: "Coffee", count: 0 }],
      multiple: false,
      closed_at: null,
    });
    const plain = await api(s, "POST", `/channels/${channel}/messages`, {
      token: w.member.token,
      body: { body: "no poll" },
    });
    assert.equal(plain.body.data.poll, null);
    for (
      const options of [
        ["Only one"],
        ["Same", "Same"],
        ["Fine", "x".repeat(81)],
        ["Fine", "  "],
        Array.from({ length: 11 }, (_, i) => `Option ${i}`),
      ]
    ) {
      assertInvalid(await postPoll(s, { token: w.member.token, channel, options }), "poll");
    }
  } finally {
    await s.close();
  }
});

Deno.test("polls: a vote moves without multiple, adds up with it; repeats change nothing", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const channel = w.team.general_channel_id;
    const poll = (await postPoll(s, { token: w.admin.token, channel })).body.data.id;
    const at = (o: string) => `/channels/${channel}/messages/${poll}/votes/${o}`;
    const show = async () =>
      optionsOf(
        (await api(s, "GET", `/channels/${channel}/messages/${poll}`, {
          token: w.admin.token,
        })).body,
      );
    // Options are numbered from 1, in the order given; a miss says so.
    const zero = await api(s, "PUT", at("0"), { token: w.member.token });
    assertStatus(zero, 404);
    assert.match(zero.body.message, /No option 0 in this poll: its options are 1 to 2/);
    assertStatus(await api(s, "PUT", at("1"), { token: w.member.token }), 204);
    assert.deepEqual(await show(), { 1: 1, 2: 0 });
    assertStatus(await api(s, "PUT", at("2"), { token: w.member.token }), 204);
    assert.deepEqual(await show(), { 1: 0, 2: 1 }, "the vote moved");
    assertStatus(await api(s, "PUT", at("2"), { token: w.member.token }), 204);
    assert.deepEqual(await show(), { 1: 0, 2: 1 }, "a repeat changes nothing");
    assertStatus(await api(s, "DELETE", at("2"), { token: w.member.token }), 204);
    assertStatus(await api(s, "DELETE", at("2"), { token: w.member.token }), 204);
    assert.deepEqual(await show(), { 1: 0, 2: 0 });
    assertStatus(await api(s, "PUT", at("3"), { token: w.member.token }), 404);

    const both = (await postPoll(s, { token: w.admin.token, channel, multiple: true })).body.data;
    for (const o of ["1", "2"]) {
      await api(s, "PUT", `/channels/${channel}/messages/${both.id}/votes/${o}`, {
        token: w.member.token,
      });
    }
    const shown = await api(s, "GET", `/channels/${channel}/messages/${both.id}`, {
      token: w.member.token,
    });
    assert.deepEqual(optionsOf(shown.body), { 1: 1, 2: 1 });
    const plain = await api(s, "POST", `/channels/${channel}/messages`, {
      token: w.member.token,
      body: { body: "not a poll" },
    });
    const onPlain = await api(
      s,
      "PUT",
      `/channels/${channel}/messages/${plain.body.data.id}/votes/1`,
      { token: w.member.token },
    );
    assertStatus(onPlain, 404);
  } finally {
    await s.close();
  }
});

Deno.test("polls: voters by page; the author or an admin closes; a closed poll takes no vote, and its question no edit", async () => {
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const channel = w.team.general_channel_id;
    const poll = (await postPoll(s, { token: w.member.token, channel })).body.data.id;
    const voters = [];
    for (let i = 0; i < 55; i++) {
      const a = await actor(s.ctx, w.team, `Voter ${i}`, "member");
      voters.push(a.user.id);
      await setVote(s.ctx, {
        user_id: a.user.id,
        team_id: w.team.id,
        name: a.user.name,
        type: "human",
        role: "member",
        token_id: "",
        scopes: [],
      }, { channelId: channel, messageId: poll, optionId: "1", present: true });
    }
    const listed: string[] = [];
    let path = `/channels/${channel}/messages/${poll}/votes/1`;
    for (;;) {
      const page = await api(s, "GET", path, { token: w.admin.token });
      assertStatus(page, 200);
      listed.push(...page.body.data.map((m: { id: string }) => m.id));
      if (!page.body.meta.next_cursor) break;
      path = `/channels/${channel}/messages/${poll}/votes/1?cursor=${page.body.meta.next_cursor}`;
    }
    assert.deepEqual(listed, voters.toSorted(), "every voter once, by id");
    const forged = await api(s, "GET", `${path.split("?")[0]}?cursor=${voters[0]}.forged`, {
      token: w.admin.token,
    });
    assertInvalid(forged, "cursor");

    const close = `/channels/${channel}/messages/${poll}/close`;
    const other = await actor(s.ctx, w.team, "Not the author", "member");
    assertStatus(await api(s, "POST", close, { token: other.token }), 403);
    const closed = await api(s, "POST", close, { token: w.admin.token });
    assertStatus(closed, 200);
    assert.ok(closed.body.data.poll.closed_at);
    assert.equal(optionsOf(closed.body)["1"], 55);
    const late = await api(s, "PUT", `/channels/${channel}/messages/${poll}/votes/2`, {
      token: other.token,
    });
    assertInvalid(late, "poll");
    const edit = await api(s, "PATCH", `/channels/${channel}/messages/${poll}`, {
      token: w.member.token,
      body: { body: "Changed question" },
    });
    assertInvalid(edit, "body");

    assertStatus(
      await api(s, "DELETE", `/channels/${channel}/messages/${poll}`, { token: w.member.token }),
      204,
    );
    const gone = await api(s, "GET", `/channels/${channel}/messages/${poll}`, {
      token: w.member.token,
    });
    assert.equal(gone.body.data.poll, null, "a tombstone keeps no poll");
    await waitUntil(
      async () => {
        const left = s.ctx.kv.list({ prefix: keys.pollVotes(poll) });
        return (await left.next()).done === true;
      },
      5_000,
      "the votes deleted",
    );
  } finally {
    await s.close();
  }
});

Deno.test("polls: a subscription gets the poll events only if it lists them", async () => {
  const s = await startServer({}, { engine: true });
  const listing = receiver();
  const notListing = receiver();
  try {
    const w = await workspace(s.ctx);
    const channel = w.team.general_channel_id;
    await subscribe(s, w.admin.token, listing.url, {
      events: ["poll.vote_added", "poll.vote_removed", "poll.closed"],
    });
    await subscribe(s, w.admin.token, notListing.url);
    const poll = (await postPoll(s, { token: w.admin.token, channel })).body.data.id;
    const at = (o: string) => `/channels/${channel}/messages/${poll}/votes/${o}`;
    await api(s, "PUT", at("1"), { token: w.member.token });
    await api(s, "PUT", at("2"), { token: w.member.token });
    await api(s, "POST", `/channels/${channel}/messages/${poll}/close`, { token: w.admin.token });
    const events = (await listing.waitFor(4)).map((h) => JSON.parse(h.body));
    // A subscription's deliveries run several at once, so they may arrive in any order.
    const seen = events.map((e) => `${e.type} ${e.data.option_id ?? ""}`).sort();
    assert.deepEqual(seen, [
      "poll.closed ",
      "poll.vote_added 1",
      "poll.vote_added 2",
      "poll.vote_removed 1",
    ]);
    const closed = events.find((e) => e.type === "poll.closed").data;
    assert.equal(closed.poll.options[1].count, 1);
    // The feed serves the same envelopes: a page of them is one openapi.yaml describes.
    checkResponse("GET", "/api/v1/events", 200, {
      data: events,
      meta: { next_cursor: null, has_more: false, until: new Date().toISOString() },
    });
    await notListing.waitFor(1);
    await new Promise((done) => setTimeout(done, 300));
    assert.deepEqual(notListing.hits.map((h) => JSON.parse(h.body).type), ["message.created"]);
  } finally {
    await s.close();
    await listing.close();
    await notListing.close();
  }
});

Deno.test("polls: 20 people vote through two instances at once, half move their vote: the counts are exact", async () => {
  const store = await sharedStore();
  const services = [await startService(store.env), await startService(store.env)];
  try {
    const [a, b] = services.map((p) => store.as(p));
    const w = await workspace(store.ctx);
    const channel = w.team.general_channel_id;
    const poll = (await postPoll(a, { token: w.admin.token, channel })).body.data.id;
    const people = await Promise.all(
      Array.from({ length: 20 }, (_, i) => actor(store.ctx, w.team, `Voter ${i}`, "member")),
    );
    const vote = (i: number, option: string) =>
      api(i % 2 ? a : b, "PUT", `/channels/${channel}/messages/${poll}/votes/${option}`, {
        token: people[i].token,
      });
    const first = await Promise.all(people.map((_, i) => vote(i, "1")));
    assert.ok(first.every((r) => r.status === 204));
    const moved = await Promise.all(people.slice(0, 10).map((_, i) => vote(i, "2")));
    assert.ok(moved.every((r) => r.status === 204));
    for (const s of [a, b]) {
      const shown = await api(s, "GET", `/channels/${channel}/messages/${poll}`, {
        token: w.admin.token,
      });
      assert.deepEqual(optionsOf(shown.body), { 1: 10, 2: 10 });
    }
    const closed = await api(b, "POST", `/channels/${channel}/messages/${poll}/close`, {
      token: w.admin.token,
    });
    assertStatus(closed, 200);
    assertInvalid(await vote(15, "2"), "poll");
  } finally {
    for (const s of services) await s.kill();
    await store.cleanup();
  }
});
