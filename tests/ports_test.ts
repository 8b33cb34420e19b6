/**
 * The ports tests start servers on (issue 65, item 21): a port the kernel hands out for port 0
 * may be given to an outgoing connection before the server binds it (three Bolt apps failed with
 * EADDRINUSE under load), and two tests must never be handed the same one.
 */
import assert from "node:assert/strict";
import { freePort } from "./processes.ts";

Deno.test("ports: below the kernel's ephemeral range, and never handed out twice", () => {
  const floor = Number(
    Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").split(/\s+/)[0],
  );
  const ports = Array.from({ length: 200 }, () => freePort());
  assert.equal(new Set(ports).size, ports.length);
  assert.ok(ports.every((p) => p >= 10_000 && p < Math.min(floor, 32_768)), String(floor));
});
