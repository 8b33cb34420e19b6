/**
 * Scheduled messages (decisions.md, "More of the Web API"): chat.scheduleMessage checked as a
 * post is, listed and deleted by their author, and posted at their time exactly once: against a
 * delete racing the post, and across a SIGKILL of the process posting them (real processes on
 * one store file, Slack's own @slack/web-api where it runs).
 */
import assert from "node:assert/strict";
import { actor, slackApi, startServer, workspace } from "./harness.ts";
import { ScheduledPoster } from "../domain/messages/scheduled_posting.ts";
import { deactivateUser } from "../domain/people/people.ts";
import { keys } from "../kv/keys.ts";
import type { Message } from "../core/types.ts";
import type { Ctx } from "../domain/context.ts";
import { type Service, sharedStore, startService } from "./processes.ts";
import { waitUntil } from "./webhook_receivers.ts";
import { slackSdks } from "./slack_sdks.ts";

const slack = (s: { url: string }, token: string, method: string, args: object) =>
  slackApi(s, token, { method, args });

const nowS = () => Math.floor(Date.now() / 1000);

/** The bodies of a channel's messages starting with `prefix`, with how often each appears. */
async function posted(ctx: Ctx, channelId: string, prefix: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for await (const e of ctx.kv.list<Message>({ prefix: keys.timeline(channelId) })) {
    if (e.value.body.startsWith(prefix)) out.set(e.value.body, (out.get(e.value.body) ?? 0) + 1);
  }
  return out;
}

Deno.test("scheduled: checked when scheduled, listed and deleted by its author, posted at its time", async () => {
  const s = await startServer();
  const poster = new ScheduledPoster(s.ctx);
  try {
    const w = await workspace(s.ctx);
    const general = w.team.general_channel_id;
    const call = (token: string, method: string, args: object) => slack(s, token, method, args);

    const past = await call(w.admin.token, "chat.scheduleMessage", {
      channel: general,
      post_at: nowS() - 10,
      text: "too late",
    });
    assert.equal(past.error, "time_in_past");
    const far = await call(w.admin.token, "chat.scheduleMessage", {
      channel: general,
      post_at: nowS() + 121 * 86_400,
      text: "too far",
    });
    assert.equal(far.error, "time_too_far");
    const empty = await call(w.admin.token, "chat.scheduleMessage", {
      channel: general,
      post_at: nowS() + 60,
    });
    assert.equal(empty.error, "no_text");
    const elsewhere = await call(w.admin.token, "chat.scheduleMessage", {
      channel: crypto.randomUUID(),
      post_at: nowS() + 60,
      text: "where?",
    });
    assert.equal(elsewhere.error, "channel_not_found");

    const soon = await call(w.admin.token, "chat.scheduleMessage", {
      channel: "#general",
      post_at: String(nowS() + 1),
      text: "scheduled: soon",
    });
    assert.equal(soon.ok, true, JSON.stringify(soon));
    assert.equal(soon.channel, general);
    assert.equal(soon.message.type, "delayed_message");
    const later = await call(w.admin.token, "chat.scheduleMessage", {
      channel: general,
      post_at: nowS() + 3_600,
      text: "scheduled: later",
    });
    const listed = await call(w.admin.token, "chat.scheduledMessages.list", {});
    assert.deepEqual(
      listed.scheduled_messages.map((m: { id: string }) => m.id),
      [soon.scheduled_message_id, later.scheduled_message_id],
    );
    const others = await call(w.member.token, "chat.scheduledMessages.list", {});
    assert.deepEqual(others.scheduled_messages, []);
    const notMine = await call(w.member.token, "chat.deleteScheduledMessage", {
      channel: general,
      scheduled_message_id: later.scheduled_message_id,
    });
    assert.equal(notMine.error, "invalid_scheduled_message_id");
    const deleted = await call(w.admin.token, "chat.deleteScheduledMessage", {
      channel: general,
      scheduled_message_id: later.scheduled_message_id,
    });
    assert.equal(deleted.ok, true);

    // A person deactivated before the time: its message is not posted.
    const leaver = await actor(s.ctx, w.team, "Leaver", "member");
    await call(leaver.token, "chat.scheduleMessage", {
      channel: general,
      post_at: nowS() + 1,
      text: "scheduled: from someone gone",
    });
    await deactivateUser(s.ctx, null, leaver.user.id);

    poster.start();
    await waitUntil(
      async () => (await posted(s.ctx, general, "scheduled:")).size > 0,
      10_000,
      "the scheduled message posted",
    );
    await waitUntil(
      async () =>
        (await call(w.admin.token, "chat.scheduledMessages.list", {}))
          .scheduled_messages.length === 0,
      5_000,
      "the list empty once posted",
    );
    await poster.runDue(1_000);
    assert.deepEqual([...await posted(s.ctx, general, "scheduled:")], [["scheduled: soon", 1]]);
  } finally {
    await poster.stop();
    await s.close();
  }
});

Deno.test("scheduled: a delete racing the post: either it is posted once, or deleted and never posted", async () => {
  const s = await startServer();
  const poster = new ScheduledPoster(s.ctx);
  try {
    const w = await workspace(s.ctx);
    const general = w.team.general_channel_id;
    const at = nowS() + 2;
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) {
      const made = await slack(s, w.admin.token, "chat.scheduleMessage", {
        channel: general,
        post_at: at,
        text: `race ${i}`,
      });
      ids.push(made.scheduled_message_id);
    }
    poster.start();
    while (Date.now() < at * 1000) await new Promise((r) => setTimeout(r, 5));
    const answers = await Promise.all(
      ids.map((id) =>
        slack(s, w.admin.token, "chat.deleteScheduledMessage", {
          channel: general,
          scheduled_message_id: id,
        })
      ),
    );
    await waitUntil(
      async () =>
        (await slack(s, w.admin.token, "chat.scheduledMessages.list", {}))
          .scheduled_messages.length === 0,
      10_000,
      "nothing left scheduled",
    );
    const seen = await posted(s.ctx, general, "race ");
    answers.forEach((answer, i) => {
      const n = seen.get(`race ${i}`) ?? 0;
      if (answer.ok) assert.equal(n, 0, `race ${i} deleted, yet posted`);
      else {
        assert.equal(answer.error, "invalid_scheduled_message_id", JSON.stringify(answer));
        assert.equal(n, 1, `race ${i} posted ${n} times`);
      }
    });
  } finally {
    await poster.stop();
    await s.close();
  }
});

Deno.test("scheduled: SIGKILL while posting: each posted exactly once after a restart", async () => {
  const store = await sharedStore();
  let service: Service | undefined;
  try {
    service = await startService(store.env);
    const w = await workspace(store.ctx);
    const general = w.team.general_channel_id;
    // Slack's own client where it runs (Deno 2.9); its calls as plain requests on 2.5.
    const call = await slackClient(service.url, w.admin.token);
    const n = 1_000;
    const at = nowS() + 3;
    for (let i = 0; i < n; i += 50) {
      await Promise.all(
        Array.from(
          { length: 50 },
          (_, j) =>
            call("chat.scheduleMessage", { channel: general, post_at: at, text: `kill ${i + j}` }),
        ),
      );
    }
    await waitUntil(
      async () => (await posted(store.ctx, general, "kill ")).size > 0,
      15_000,
      "posting to begin",
    );
    await service.kill();
    service = await startService(store.env, { port: Number(new URL(service.url).port) });
    await waitUntil(
      async () => (await posted(store.ctx, general, "kill ")).size === n,
      30_000,
      `all ${n} posted`,
    );
    const seen = await posted(store.ctx, general, "kill ");
    const twice = [...seen].filter(([, count]) => count !== 1);
    assert.deepEqual(twice, [], "each posted exactly once");
    const left = await call("chat.scheduledMessages.list", {});
    assert.deepEqual(left.scheduled_messages, []);
  } finally {
    await service?.kill();
    await store.cleanup();
  }
});

/** A Web API caller: `@slack/web-api`'s `apiCall` where the SDKs run, else a plain request. */
async function slackClient(url: string, token: string) {
  if (!slackSdks) {
    return (method: string, args: Record<string, unknown>) => slack({ url }, token, method, args);
  }
  const { WebClient } = await import("npm:@slack/web-api@8.2.0");
  const web = new WebClient(token, {
    slackApiUrl: `${url}/api/slack/`,
    retryConfig: { retries: 0 },
  });
  // deno-lint-ignore no-explicit-any
  return (method: string, args: Record<string, unknown>): Promise<any> => web.apiCall(method, args);
}
