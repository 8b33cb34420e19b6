/**
 * docs/verifying-webhooks.md's Python and Node functions, as the page prints them, verify real
 * X-Service-Signature headers (delivery/sign.ts makes them, as every delivery does, with two
 * secrets during a rotation) and refuse a tampered body, a stale time and a wrong secret.
 */
import assert from "node:assert/strict";
import { signatureHeader } from "../delivery/sign.ts";
import { Signer } from "../core/signer.ts";

const PAGE = new URL("../docs/verifying-webhooks.md", import.meta.url);

const blockOf = (text: string, lang: string) =>
  new RegExp("^```" + lang + "\\n([\\s\\S]*?)^```$", "m").exec(text)?.[1];

const onPath = async (cmd: string) =>
  (await new Deno.Command("sh", { args: ["-c", `command -v ${cmd}`] }).output()).success;

interface Case {
  name: string;
  secret: string;
  header: string;
  body: string;
  valid: boolean;
}

function cases(): Case[] {
  const secret = `whsec_${btoa("a-secret-of-32-bytes-for-tests!!").replace(/=+$/, "")}`;
  const old = "whsec_the-one-being-rotated-out";
  const body = JSON.stringify({ id: "evt", type: "message.created", data: { body: "héllo ✓" } });
  const now = Date.now();
  const rotated = signatureHeader([new Signer(old), new Signer(secret)], body, now);
  return [
    {
      name: "valid",
      secret,
      header: signatureHeader([new Signer(secret)], body, now),
      body,
      valid: true,
    },
    { name: "the second v1, during a rotation", secret, header: rotated, body, valid: true },
    {
      name: "a tampered body",
      secret,
      header: rotated,
      body: body.replace("héllo", "hello"),
      valid: false,
    },
    {
      name: "a stale time",
      secret,
      header: signatureHeader([new Signer(secret)], body, now - 301_000),
      body,
      valid: false,
    },
    { name: "a wrong secret", secret: `${secret}x`, header: rotated, body, valid: false },
    { name: "no t", secret, header: rotated.replace(/^t=\d+,/, ""), body, valid: false },
  ];
}

/** Runs `program` with each case in its environment; what it printed, a line per case. */
async function answers(cmd: string, args: string[], program: string): Promise<string[]> {
  const out: string[] = [];
  for (const c of cases()) {
    const run = await new Deno.Command(cmd, {
      args: [...args, program],
      env: { SECRET: c.secret, HEADER: c.header, BODY: c.body },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(run.stdout).trim();
    assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
    out.push(`${c.name}: ${text}`);
  }
  return out;
}

const expected = (yes: string, no: string) =>
  cases().map((c) => `${c.name}: ${c.valid ? yes : no}`);

Deno.test({
  name: "verify snippets: the Python function the page shows",
  ignore: !await onPath("python3"),
  async fn() {
    const code = blockOf(await Deno.readTextFile(PAGE), "python");
    assert.ok(code, "a python block");
    const program = `${code}\nimport os\nprint(verify(os.environ["SECRET"], ` +
      `os.environ["HEADER"], os.environ["BODY"].encode()))\n`;
    assert.deepEqual(await answers("python3", ["-c"], program), expected("True", "False"));
  },
});

Deno.test({
  name: "verify snippets: the Node function the page shows",
  ignore: !await onPath("node"),
  async fn() {
    const code = blockOf(await Deno.readTextFile(PAGE), "js");
    assert.ok(code, "a js block");
    const program = `${code}\nconst { SECRET, HEADER, BODY } = process.env;\n` +
      `console.log(verify(SECRET, HEADER, Buffer.from(BODY)));\n`;
    assert.deepEqual(
      await answers("node", ["--input-type=module", "-e"], program),
      expected("true", "false"),
    );
  },
});
