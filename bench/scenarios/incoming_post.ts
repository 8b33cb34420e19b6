/**
 * Issue 8: posting through an incoming webhook, POST /hooks/<secret>, against posting the same
 * message as the same bot through the API, POST /api/v1/channels/{id}/messages, in one service
 * (the target: the hook path reaches at least 0.8 of the API's rate).
 */
import { addMemberAsOperator } from "../../domain/channels/members.ts";
import { createIncoming } from "../../domain/webhooks/incoming.ts";
import { createToken } from "../../domain/people/tokens.ts";
import { createUser } from "../../domain/people/workspace.ts";
import { freePort, startService } from "../procs.ts";
import { ratioRow, type Row } from "../report.ts";
import { openCtx, seedWorkspace, serviceEnv } from "../seed.ts";
import { measure, postScript, writeScript, type WrkResult } from "../wrk.ts";
import { type Bench, bestOf, scenarioDir, using } from "./context.ts";

const TEXT_LUA =
  `string.format('{"%s":"Build %d-%d passed: the quick brown fox jumps over the lazy dog."}', field, tid, n)`;

interface Targets {
  port: number;
  hookPath: string;
  apiPath: string;
  botToken: string;
  dir: string;
  kvPath: string;
}

/** A workspace whose bot is in the channel, with a token and an incoming webhook. */
async function seed(root: string): Promise<Targets> {
  const dir = await scenarioDir(root, "incoming");
  const kvPath = `${dir}/kv.sqlite3`;
  const port = freePort();
  const ctx = await openCtx(kvPath);
  ctx.settings.baseUrl = `http://127.0.0.1:${port}`;
  const seeded = await seedWorkspace(ctx);
  const bot = await createUser(
    ctx,
    { teamId: seeded.subject.team_id, name: "CI", type: "bot" },
    null,
  );
  await addMemberAsOperator(ctx, seeded.channel.id, bot);
  const { value } = await createToken(ctx, bot, { scopes: ["messages:write"], actor: null });
  const { url } = await createIncoming(ctx, { channelId: seeded.channel.id, botId: bot.id }, null);
  ctx.kv.close();
  return {
    port,
    hookPath: new URL(url).pathname,
    apiPath: `/api/v1/channels/${seeded.channel.id}/messages`,
    botToken: value,
    dir,
    kvPath,
  };
}

async function post(t: Targets, path: string, field: string, auth: Record<string, string>) {
  const lua = `local field = ${JSON.stringify(field)}\n` + postScript(path, auth, TEXT_LUA);
  const script = await writeScript(t.dir, field, lua);
  return await using(
    startService(serviceEnv(t.kvPath, t.port)),
    (p) => measure({ url: `${p.url}${path}`, script }, { server: p }),
  );
}

export async function incomingPost({ root }: Bench): Promise<Row[]> {
  const t = await seed(root);
  const { hook, api } = await bestOf<"hook" | "api", WrkResult>({
    hook: () => post(t, t.hookPath, "text", {}),
    api: () => post(t, t.apiPath, "body", { Authorization: `Bearer ${t.botToken}` }),
  });
  return [ratioRow("POST /hooks/<secret> vs POST .../messages (bot)", hook, api, 0.8)];
}
