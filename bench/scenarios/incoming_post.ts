/**
 * Issue 8: posting through an incoming webhook, POST /hooks/<secret>, against posting the same
 * message as the same bot through the API, POST /api/v1/channels/{id}/messages, in one service
 * (the target: the hook path reaches at least 0.8 of the API's rate); and issue 56, checking a
 * signing sender's post, in this process.
 */
import { createHmac } from "node:crypto";
import { checkSignature, mintVerifySecret } from "../../domain/webhooks/incoming_verify.ts";
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
  return [
    ratioRow("POST /hooks/<secret> vs POST .../messages (bot)", hook, api, 0.8),
    ...verifying(),
  ];
}

/** A signed post's check (issue 56: at most 0.2 ms), for each sender's scheme, in this process. */
function verifying(): Row[] {
  const body = JSON.stringify({ text: "Build #42 passed on main", attachments: [] });
  return (["standard", "github", "stripe"] as const).map((scheme) => {
    const secret = mintVerifySecret(scheme);
    const post = { headers: signedHeaders(scheme, secret, body), body, nowMs: Date.now() };
    const rounds = 20_000;
    for (let i = 0; i < 1_000; i++) checkSignature(scheme, post, [secret]);
    const start = performance.now();
    for (let i = 0; i < rounds; i++) checkSignature(scheme, post, [secret]);
    const us = (performance.now() - start) * 1000 / rounds;
    return {
      scenario: `  verifying a ${scheme}-signed incoming post`,
      value: `${us.toFixed(1)} us`,
      baseline: "",
      ratio: "",
      target: "<= 200 us",
      pass: us <= 200,
    };
  });
}

/** The headers each sender signs a post with. */
function signedHeaders(scheme: "standard" | "github" | "stripe", secret: string, body: string) {
  const t = Math.floor(Date.now() / 1000);
  const hex = (key: string | Uint8Array, text: string) =>
    createHmac("sha256", key).update(text).digest("hex");
  if (scheme === "github") {
    return new Headers({ "X-Hub-Signature-256": `sha256=${hex(secret, body)}` });
  }
  if (scheme === "stripe") {
    return new Headers({ "Stripe-Signature": `t=${t},v1=${hex(secret, `${t}.${body}`)}` });
  }
  const key = Uint8Array.fromBase64(secret.slice("whsec_".length));
  const signature = createHmac("sha256", key).update(`msg_1.${t}.${body}`).digest("base64");
  return new Headers({
    "webhook-id": "msg_1",
    "webhook-timestamp": String(t),
    "webhook-signature": `v1,${signature}`,
  });
}
