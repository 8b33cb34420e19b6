import type { Keyring } from "../domain/keyring.ts";
import type { Subscription } from "../domain/webhook_records.ts";
import { signingKey } from "./sign.ts";

const MAX_CACHED = 1024;

/**
 * HMAC keys of the subscriptions' secrets, decrypted and imported once. Cached by the sealed
 * text, not by the record's versionstamp: every attempt rewrites the record's stats, while the
 * sealed secret only changes on rotation.
 */
export class SigningKeys {
  readonly #cache = new Map<string, Promise<CryptoKey>>();

  constructor(private readonly keyring: Keyring) {}

  /** The keys to sign with at `nowMs`: the current secret, then one being rotated out. */
  async for(sub: Subscription, nowMs = Date.now()): Promise<CryptoKey[]> {
    const sealed = [sub.secret];
    if (
      sub.previous_secret && sub.previous_secret_expires_at &&
      Date.parse(sub.previous_secret_expires_at) > nowMs
    ) {
      sealed.push(sub.previous_secret);
    }
    return await Promise.all(sealed.map((s) => this.#key(s)));
  }

  #key(sealed: string): Promise<CryptoKey> {
    let key = this.#cache.get(sealed);
    if (!key) {
      if (this.#cache.size >= MAX_CACHED) this.#cache.clear();
      key = this.keyring.decrypt(sealed).then(signingKey);
      key.catch(() => this.#cache.delete(sealed));
      this.#cache.set(sealed, key);
    }
    return key;
  }
}
