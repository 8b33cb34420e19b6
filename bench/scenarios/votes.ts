/**
 * Issue 42, polls: a vote costs no more than a reaction. Each request adds a vote (or a
 * reaction) that was not there, so each writes and fires one event: voters and polls enough
 * that no request repeats another within a measurement, each round on polls of its own. The
 * vote's rate against the reaction's, in the same run.
 */
import type { Ctx } from "../../domain/context.ts";
import { postMessage } from "../../domain/messages/messages.ts";
import { createToken } from "../../domain/people/tokens.ts";
import { createUser } from "../../domain/people/workspace.ts";
import { SCOPES } from "../../core/types.ts";
import { freePort, startService } from "../procs.ts";
import { ratioRow, type Row } from "../report.ts";
import { openCtx, type Seeded, seedWorkspace, serviceEnv } from "../seed.ts";
import { LOAD, measure, writeScript } from "../wrk.ts";
import { type Bench, bestOf, ROUNDS, scenarioDir, using } from "./context.ts";

/** Voters each wrk thread sends as, and the polls each measurement goes through. */
const VOTERS_PER_THREAD = 20;
const POLLS_PER_ROUND = 500;

async function seedPolls(ctx: Ctx, seeded: Seeded): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < POLLS_PER_ROUND * ROUNDS * 2; i++) {
    const { message } = await postMessage(ctx, seeded.subject, seeded.channel.id, {
      ok: true,
      value: { body: `Bench poll ${i}?`, poll: { options: ["Yes", "No"] } },
    });
    ids.push(message.id);
  }
  return ids;
}

async function seedVoters(ctx: Ctx, seeded: Seeded): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < VOTERS_PER_THREAD * LOAD.threads; i++) {
    const user = await createUser(ctx, {
      teamId: seeded.subject.team_id,
      name: `Voter ${i}`,
      type: "human",
      role: "member",
    }, null);
    tokens.push((await createToken(ctx, user, { scopes: [...SCOPES], actor: null })).value);
  }
  return tokens;
}

/** A wrk script adding `suffix` on `polls`, thread `tid` as its own voters, each pair once. */
function addScript(
  { channelId, polls, suffix, tokens }: {
    channelId: string;
    polls: string[];
    suffix: string;
    tokens: string[];
  },
) {
  const list = (xs: string[]) => xs.map((x) => JSON.stringify(x)).join(", ");
  return `
local polls = { ${list(polls)} }
local tokens = { ${list(tokens)} }
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
n = 0
function request()
  local voter = (tid - 1) * ${VOTERS_PER_THREAD} + (n % ${VOTERS_PER_THREAD}) + 1
  local poll = (math.floor(n / ${VOTERS_PER_THREAD}) % #polls) + 1
  n = n + 1
  local path = "/api/v1/channels/${channelId}/messages/" .. polls[poll] .. "${suffix}"
  return wrk.format("PUT", path, { ["Authorization"] = "Bearer " .. tokens[voter] })
end
`;
}

export async function votes({ root }: Bench): Promise<Row[]> {
  const dir = await scenarioDir(root, "votes");
  const kvPath = `${dir}/kv.sqlite3`;
  const ctx = await openCtx(kvPath);
  const seeded = await seedWorkspace(ctx);
  const polls = await seedPolls(ctx, seeded);
  const tokens = await seedVoters(ctx, seeded);
  ctx.kv.close();
  const scripts: Record<"vote" | "react", string[]> = { vote: [], react: [] };
  for (let round = 0; round < ROUNDS * 2; round++) {
    const kind = round % 2 ? "react" : "vote";
    const mine = polls.slice(round * POLLS_PER_ROUND, (round + 1) * POLLS_PER_ROUND);
    const suffix = kind === "vote" ? "/votes/1" : "/reactions/%F0%9F%91%8D";
    const lua = addScript({ channelId: seeded.channel.id, polls: mine, suffix, tokens });
    scripts[kind].push(await writeScript(dir, `${kind}-${round}`, lua));
  }
  return await using(startService(serviceEnv(kvPath, freePort())), async (p) => {
    const url = `${p.url}/api/v1/channels/${seeded.channel.id}`;
    // Each round takes the next script: polls of its own, so no request repeats an earlier one.
    const taken = { vote: 0, react: 0 };
    const run = (kind: "vote" | "react") => () =>
      measure({ url, script: scripts[kind][taken[kind]++] }, { server: p });
    const best = await bestOf({ vote: run("vote"), react: run("react") });
    return [
      ratioRow(
        "PUT .../votes/1 vs PUT .../reactions/{emoji} (each new)",
        best.vote,
        best.react,
        0.9,
      ),
    ];
  });
}
