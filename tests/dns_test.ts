import assert from "node:assert/strict";
import { cachedResolver, type DnsAnswer, systemLookup } from "../core/dns.ts";
import { resolveTarget } from "../core/url_safety.ts";
import { send } from "../core/outbound/send.ts";
import { Connector } from "../core/outbound/connector.ts";

/** A lookup answering from `answers`, counting its calls per name. */
function fakeLookup(answers: Record<string, DnsAnswer[]>) {
  const calls: string[] = [];
  const lookup = (host: string) => {
    calls.push(host);
    return Promise.resolve(answers[host] ?? []);
  };
  return { lookup, calls };
}

Deno.test("dns: an answer is kept for its shortest TTL, and looked up again after it", async () => {
  let clock = 1_000_000;
  const { lookup, calls } = fakeLookup({
    "hook.example.test": [{ address: "93.184.216.34", ttl: 60 }, {
      address: "2606:4700::1",
      ttl: 30,
    }],
  });
  const resolve = cachedResolver(lookup, () => clock);
  assert.deepEqual(await resolve("hook.example.test"), ["93.184.216.34", "2606:4700::1"]);
  clock += 29_000;
  await resolve("hook.example.test");
  assert.equal(calls.length, 1, "within the TTL: no lookup");
  clock += 1_000;
  await resolve("hook.example.test");
  assert.equal(calls.length, 2, "the shorter TTL has passed");
});

Deno.test("dns: one lookup per name at a time; failures, empty answers and TTL 0 are not kept", async () => {
  const { lookup, calls } = fakeLookup({
    "zero.example.test": [{ address: "93.184.216.34", ttl: 0 }],
    "shared.example.test": [{ address: "93.184.216.34", ttl: 60 }],
  });
  let failing = true;
  const resolve = cachedResolver((host) =>
    host === "flaky.example.test" && failing ? Promise.reject(new Error("SERVFAIL")) : lookup(host)
  );
  await Promise.all([1, 2, 3].map(() => resolve("shared.example.test")));
  assert.deepEqual(calls, ["shared.example.test"]);
  await resolve("zero.example.test");
  await resolve("zero.example.test");
  await resolve("nothing.example.test");
  await resolve("nothing.example.test");
  await assert.rejects(() => resolve("flaky.example.test"), /SERVFAIL/);
  failing = false;
  assert.deepEqual(await resolve("flaky.example.test"), []);
  assert.deepEqual(calls.slice(1), [
    "zero.example.test",
    "zero.example.test",
    "nothing.example.test",
    "nothing.example.test",
    "flaky.example.test",
  ]);
});

Deno.test("dns: a kept answer is checked against the SSRF rules on every use", async () => {
  let clock = 0;
  const answers: Record<string, DnsAnswer[]> = {
    "rebind.example.test": [{ address: "93.184.216.34", ttl: 1 }],
  };
  const { lookup, calls } = fakeLookup(answers);
  const resolver = cachedResolver(lookup, () => clock);
  const strict = { allowPrivate: false, resolver };
  const first = await resolveTarget("https://rebind.example.test/", strict);
  assert.equal(first.address, "93.184.216.34");
  answers["rebind.example.test"] = [{ address: "169.254.169.254", ttl: 300 }];
  clock += 1_000;
  await assert.rejects(() => resolveTarget("https://rebind.example.test/", strict), /metadata/);
  await assert.rejects(() => resolveTarget("https://rebind.example.test/", strict), /metadata/);
  assert.equal(calls.length, 2, "the second refusal came from the kept answer, checked again");
});

Deno.test("dns: a cloud metadata address is refused even where private URLs are allowed", async () => {
  const { lookup } = fakeLookup({
    "metadata.example.test": [{ address: "169.254.169.254", ttl: 60 }],
    "mapped.example.test": [{ address: "::ffff:169.254.169.254", ttl: 60 }],
    "private.example.test": [{ address: "10.0.0.7", ttl: 60 }],
  });
  const lax = { allowPrivate: true, resolver: cachedResolver(lookup, () => 0) };
  for (
    const url of [
      "http://169.254.169.254/latest/meta-data/",
      "http://[fd00:ec2::254]/",
      "http://[::ffff:169.254.169.254]/",
      "http://metadata.google.internal/computeMetadata/v1/",
      "https://metadata.example.test/",
      "https://mapped.example.test/",
    ]
  ) {
    await assert.rejects(() => resolveTarget(url, lax), /metadata/, url);
  }
  assert.equal((await resolveTarget("https://private.example.test/", lax)).address, "10.0.0.7");
  assert.equal((await resolveTarget("http://10.1.2.3:8000/", lax)).address, "10.1.2.3");
});

Deno.test("dns: a caller's abort ends its own wait, not the lookup others share", async () => {
  const { promise, resolve: answer } = Promise.withResolvers<DnsAnswer[]>();
  const resolve = cachedResolver(() => promise);
  const controller = new AbortController();
  const mine = resolve("slow.example.test", controller.signal);
  const theirs = resolve("slow.example.test");
  controller.abort(new Error("timed out"));
  await assert.rejects(mine, /timed out/);
  answer([{ address: "93.184.216.34", ttl: 60 }]);
  assert.deepEqual(await theirs, ["93.184.216.34"]);
});

Deno.test("dns: the system lookup reports each answer's TTL", async () => {
  const answers = await systemLookup("localhost");
  assert.ok(answers.length > 0, "localhost resolves");
  for (const a of answers) {
    assert.ok(["127.0.0.1", "::1"].includes(a.address), a.address);
    assert.ok(Number.isInteger(a.ttl) && a.ttl >= 0, `ttl ${a.ttl}`);
  }
});

Deno.test("dns: a receiver down is named alike by host name and by address: connection refused", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  const connector = new Connector();
  try {
    for (const host of ["localhost", "127.0.0.1"]) {
      const outcome = await send(`http://${host}:${port}/`, {}, "{}", {
        connector,
        timeoutMs: 2_000,
        allowPrivate: true,
      });
      assert.equal(outcome.error, "connection refused", host);
    }
  } finally {
    connector.close();
  }
});
