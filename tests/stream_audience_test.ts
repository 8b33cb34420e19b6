import assert from "node:assert/strict";
import { authenticate } from "../domain/authenticate.ts";
import { selectFor } from "../domain/stream_audience.ts";
import type { LoggedEvent } from "../kv/stream_log.ts";
import { createChannelAs, withWorkspace } from "./harness.ts";

Deno.test("stream audience: a round no stream's filter takes reads nothing", () =>
  withWorkspace(async (s, w) => {
    const quiet = await createChannelAs(s, w.admin.token, "quiet");
    const subject = await authenticate(s.ctx, w.admin.token);
    const event: LoggedEvent = {
      versionstamp: "00000000000000010000",
      id: crypto.randomUUID(),
      type: "message.created",
      channel_id: w.team.general_channel_id,
      marker: "",
    };
    let reads = 0;
    const { kv } = s.ctx;
    const getMany = kv.getMany.bind(kv);
    kv.getMany =
      ((...args: Parameters<Deno.Kv["getMany"]>) => (reads++, getMany(...args))) as Deno.Kv[
        "getMany"
      ];
    const elsewhere = { subject, filter: { types: null, channelIds: [quiet] } };
    assert.deepEqual(await selectFor(s.ctx, [event], [elsewhere, elsewhere]), [[], []]);
    assert.equal(reads, 0, "nothing read for streams of another channel");

    const everything = { subject, filter: { types: null, channelIds: null } };
    assert.deepEqual(await selectFor(s.ctx, [event], [elsewhere, everything]), [[], [0]]);
    assert.ok(reads > 0);
  }));
