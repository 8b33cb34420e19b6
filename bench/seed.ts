/**
 * Test data, written straight into a scenario's KV file with the project's own domain and kv
 * functions, from the bench process: the server opens the same file afterwards (or meanwhile).
 */
import type { Ctx } from "../domain/context.ts";
import { createChannel } from "../domain/channels/channels.ts";
import { draftMessage } from "../domain/messages/draft.ts";
import { postMessage } from "../domain/messages/messages.ts";
import { loadSettings } from "../core/settings.ts";
import { createToken } from "../domain/people/tokens.ts";
import { authenticate } from "../domain/people/authenticate.ts";
import { type Channel, type EventType, SCOPES, type Subject } from "../core/types.ts";
import { createWebhook } from "../domain/webhooks/webhooks.ts";
import type { SignatureScheme } from "../core/webhook_records.ts";
import { createTeam, createUser } from "../domain/people/workspace.ts";
import { wrapStore } from "../kv/store/open.ts";
import { loadKeyring } from "../domain/data/app_key.ts";
import { sampleBody } from "./baselines/shared.ts";

/** The settings every scenario gives the server, plus its port and KV file. */
export function serviceEnv(kvPath: string, port: number): Record<string, string> {
  return {
    KV_PATH: kvPath,
    PORT: String(port),
    INTEGRATIONS_API_RATE_LIMIT: "100000000",
    WEBHOOKS_ALLOW_PRIVATE_URLS: "true",
  };
}

/** A context over the scenario's KV file, with the same APP_KEY file the server will use. */
export async function openCtx(kvPath: string): Promise<Ctx> {
  const settings = loadSettings(serviceEnv(kvPath, 0));
  return {
    kv: wrapStore(await Deno.openKv(kvPath), kvPath),
    settings,
    keyring: await loadKeyring(settings),
  };
}

export interface Seeded {
  token: string;
  subject: Subject;
  channel: Channel;
}

/** A team, an admin holding an all-scopes token, and a public channel it created. */
export async function seedWorkspace(ctx: Ctx): Promise<Seeded> {
  const team = await createTeam(ctx, "Bench");
  const user = await createUser(ctx, {
    teamId: team.id,
    name: "Bench Admin",
    type: "human",
    role: "admin",
  }, null);
  const { value } = await createToken(ctx, user, { scopes: [...SCOPES], actor: null });
  const subject = await authenticate(ctx, value);
  const channel = await createChannel(ctx, subject, { name: "bench", visibility: "public" });
  return { token: value, subject, channel };
}

/** Appends `count` messages to the channel, `concurrency` commits in flight at a time. */
export async function seedMessages(ctx: Ctx, seeded: Seeded, count: number, concurrency = 64) {
  const author = { id: seeded.subject.user_id, name: seeded.subject.name, type: "human" as const };
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const n = ++next;
      const draft = draftMessage({
        channel: seeded.channel,
        author,
        body: sampleBody(n),
        type: "standard",
      });
      if (!await ctx.kv.append(draft, { checks: [] })) {
        throw new Error("seeding a message failed");
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** Subscriptions a user may own (domain/webhooks/webhooks.ts): more are spread over more members. */
const PER_OWNER = 25;

/**
 * `count` subscriptions of the seeded channel to `url`, for `events`: the seeded admin's first,
 * then those of members added for the purpose.
 */
export async function seedSubscriptions(
  ctx: Ctx,
  seeded: Seeded,
  url: string,
  count: number,
  events: EventType[] = ["message.created"],
  signature_scheme: SignatureScheme = "service",
): Promise<void> {
  let owner = seeded.subject;
  for (let i = 1; i <= count; i++) {
    if (i > PER_OWNER && i % PER_OWNER === 1) {
      owner = await authenticate(ctx, (await seedMemberOf(ctx, seeded, 0)).token);
    }
    await createWebhook(ctx, owner, {
      name: `bench ${i}`,
      url,
      events,
      channel_ids: [seeded.channel.id],
      signature_scheme,
    });
  }
}

/**
 * Posts `count` messages through the messages domain function, so each commits with its
 * `message.created` event and delivery jobs, as the API would.
 */
export async function seedPosts(ctx: Ctx, seeded: Seeded, count: number, concurrency = 32) {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const body = sampleBody(++next);
      await postMessage(ctx, seeded.subject, seeded.channel.id, { ok: true, value: { body } });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** A member of the seeded team, with an all-scopes token, in `count` channels it created. */
export async function seedMemberOf(
  ctx: Ctx,
  seeded: Seeded,
  count: number,
  concurrency = 8,
): Promise<{ token: string; userId: string }> {
  const user = await createUser(ctx, {
    teamId: seeded.subject.team_id,
    name: `Member of ${count}`,
    type: "human",
    role: "member",
  }, null);
  const { value } = await createToken(ctx, user, { scopes: [...SCOPES], actor: null });
  const subject = await authenticate(ctx, value);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const n = ++next;
      await createChannel(ctx, subject, {
        name: `${user.id.slice(-6)} ${n}`,
        visibility: "public",
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { token: value, userId: user.id };
}
