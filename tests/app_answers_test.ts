/**
 * What an app answers is the app's: when the service refuses it (60 blocks, a text past the
 * limit), the person who ran the command gets 200 `failed` saying so, never a 422 on fields they
 * never sent, and nothing is posted (issue 52, item 3).
 */
import assert from "node:assert/strict";
import { api, startServer, workspace } from "./harness.ts";
import { createAppFromManifest } from "../domain/apps/declared.ts";
import { installApp } from "../domain/apps/installs.ts";

const section = { type: "section", text: { type: "mrkdwn", text: "a line" } };

Deno.test("an app's answer the service refuses fails the run in words; the person's request stands", async () => {
  let answer: unknown = {};
  const app = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () => Response.json(answer),
  );
  const s = await startServer();
  try {
    const w = await workspace(s.ctx);
    const url = `http://127.0.0.1:${app.addr.port}/slack/commands`;
    const made = await createAppFromManifest(
      s.ctx,
      JSON.stringify({
        display_information: { name: "Talker" },
        features: { slash_commands: [{ command: "/talk", url, description: "Talks" }] },
        oauth_config: { scopes: { bot: ["chat:write", "commands"] } },
      }),
      null,
    );
    await installApp(s.ctx, {
      app: made.app,
      teamId: w.team.id,
      scopes: ["commands", "messages:write"],
      channelId: null,
      approvedBy: null,
    });
    const general = w.team.general_channel_id;
    const run = () =>
      api(s, "POST", `/channels/${general}/commands`, {
        token: w.admin.token,
        body: { command: "/talk", text: "" },
      });
    const cases: [string, unknown, RegExp][] = [
      ["60 blocks", { blocks: Array(60).fill(section) }, /^the app's answer was refused: blocks: /],
      ["a text past the limit", { text: "x".repeat(40_001) }, /^the app's answer was refused: /],
      [
        "60 blocks in the channel",
        { response_type: "in_channel", text: "hi", blocks: Array(60).fill(section) },
        /^the app's answer was refused: blocks: /,
      ],
    ];
    for (const [what, given, error] of cases) {
      answer = given;
      const ran = await run();
      assert.equal(ran.status, 200, `${what}: ${JSON.stringify(ran.body)}`);
      assert.equal(ran.body.data.status, "failed", what);
      assert.match(ran.body.data.error, error, what);
    }
    const timeline = await api(s, "GET", `/channels/${general}/messages`, {
      token: w.admin.token,
    });
    assert.deepEqual(timeline.body.data, [], "nothing posted");

    answer = { text: "fine" };
    const fine = await run();
    assert.equal(fine.body.data.status, "answered");
  } finally {
    await s.close();
    await app.shutdown();
  }
});
