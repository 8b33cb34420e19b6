import assert from "node:assert/strict";
import { createKeyring, generateAppKey } from "../core/keyring.ts";

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

Deno.test("keyring: a MAC with any one character changed is refused", async () => {
  const keyring = await createKeyring(generateAppKey());
  const mac = keyring.sign("channel:42");
  assert.equal(keyring.verify("channel:42", mac), true);
  assert.equal(keyring.verify("channel:43", mac), false);
  for (let i = 0; i < mac.length; i++) {
    for (const c of BASE64URL) {
      if (c === mac[i]) continue;
      const forged = mac.slice(0, i) + c + mac.slice(i + 1);
      assert.equal(keyring.verify("channel:42", forged), false, `position ${i} as ${c}`);
    }
  }
  assert.equal(keyring.verify("channel:42", mac + "A"), false);
  assert.equal(keyring.verify("channel:42", ""), false);
});

Deno.test("keyring: secrets round-trip, and a sealed secret is bound to its APP_KEY", async () => {
  const keyring = await createKeyring(generateAppKey());
  const sealed = await keyring.encrypt("whsec_example");
  assert.ok(!sealed.includes("whsec_example"));
  assert.equal(await keyring.decrypt(sealed), "whsec_example");
  const other = await createKeyring(generateAppKey());
  await assert.rejects(() => other.decrypt(sealed));
});
