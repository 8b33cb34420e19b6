import type { Keyring } from "../core/keyring.ts";
import type { Subscription } from "../core/webhook_records.ts";
import { Signer } from "../core/signer.ts";

const MAX_CACHED = 1024;

/**
 * Signers for the subscriptions' secrets, decrypted and keyed once. Cached by the sealed text,
 * not by the record's versionstamp: every attempt rewrites the record's stats, while the sealed
 * secret only changes on rotation.
 */
export class SigningKeys {
  readonly #cache = new Map<string, Promise<Signer>>();

  constructor(private readonly keyring: Keyring) {}

  /** Who signs at `nowMs`: the current secret, then one being rotated out. */
  async for(sub: Subscription, nowMs = Date.now()): Promise<Signer[]> {
    const sealed = [sub.secret];
    if (
      sub.previous_secret && sub.previous_secret_expires_at &&
      Date.parse(sub.previous_secret_expires_at) > nowMs
    ) {
      sealed.push(sub.previous_secret);
    }
    return await Promise.all(sealed.map((s) => this.#signer(s)));
  }

  #signer(sealed: string): Promise<Signer> {
    let signer = this.#cache.get(sealed);
    if (!signer) {
      if (this.#cache.size >= MAX_CACHED) this.#cache.clear();
      signer = this.keyring.decrypt(sealed).then((secret) => new Signer(secret));
      signer.catch(() => this.#cache.delete(sealed));
      this.#cache.set(sealed, signer);
    }
    return signer;
  }
}
