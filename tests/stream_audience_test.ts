import assert from "node:assert/strict";
import { authenticate } from "../domain/people/authenticate.ts";
import { selectFor } from "../domain/stream/audience.ts";
import type { LoggedEvent } from "../kv/stream/stream_markers.ts";
import { countReads, createChannelAs, withWorkspace } from "./harness.ts";

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
    const reads = countReads(s.ctx.kv);
    const elsewhere = { subject, filter: { types: null, channelIds: [quiet] } };
    assert.deepEqual(await selectFor(s.ctx, [event], [elsewhere, elsewhere]), [[], []]);
    assert.equal(reads.getMany, 0, "nothing read for streams of another channel");

    const everything = { subject, filter: { types: null, channelIds: null } };
    assert.deepEqual(await selectFor(s.ctx, [event], [elsewhere, everything]), [[], [0]]);
    assert.ok(reads.getMany > 0);
  }));
