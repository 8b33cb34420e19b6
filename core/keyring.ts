import { createHmac } from "node:crypto";
import { sameText } from "./same_text.ts";
const enc = new TextEncoder();
const dec = new TextDecoder();

/** A MAC computed over text given piece by piece: its hex once every piece is in. */
export interface RunningMac {
  update(text: string): RunningMac;
  hex(): string;
}

/**
 * Keys derived from APP_KEY: one to encrypt secrets at rest, one to sign cursors, one to sign
 * export files, one to sign the operator's requests to the admin path.
 */
export interface Keyring {
  encrypt(plain: string): Promise<string>;
  decrypt(sealed: string): Promise<string>;
  /** A short MAC, so opaque strings we hand out (cursors) can't be forged. */
  sign(data: string): string;
  verify(data: string, mac: string): boolean;
  /** An HMAC-SHA256 of an export's lines: only a holder of APP_KEY can make one that matches. */
  exportMac(): RunningMac;
  /** The hex HMAC-SHA256 of a request to the admin path (domain/data/admin_requests.ts). */
  adminMac(text: string): string;
}

async function derive(
  master: CryptoKey,
  info: string,
  algorithm: AesKeyGenParams,
  usages: KeyUsage[],
): Promise<CryptoKey> {
  return await crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(), info: enc.encode(info) },
    master,
    algorithm,
    false,
    usages,
  );
}

/** Builds the keyring from APP_KEY (base64 of 32 bytes). */
export async function createKeyring(appKey: string): Promise<Keyring> {
  const raw = Uint8Array.fromBase64(appKey);
  if (raw.length !== 32) throw new Error("APP_KEY must be base64 of exactly 32 bytes");
  const master = await crypto.subtle.importKey("raw", raw, "HKDF", false, [
    "deriveKey",
    "deriveBits",
  ]);
  const aes = await derive(master, "secrets-at-rest", { name: "AES-GCM", length: 256 }, [
    "encrypt",
    "decrypt",
  ]);
  // Synchronous HMAC: every page answered carries a cursor, and Web Crypto's sign hops to a
  // worker thread and back for what is a microsecond of work.
  const bits = async (info: string) =>
    new Uint8Array(
      await crypto.subtle.deriveBits(
        { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(), info: enc.encode(info) },
        master,
        256,
      ),
    );
  const macKey = await bits("cursors");
  const exportKey = await bits("export-files");
  const adminKey = await bits("admin-requests");
  const sign = (data: string) =>
    new Uint8Array(createHmac("sha256", macKey).update(data).digest().subarray(0, 16))
      .toBase64({ alphabet: "base64url", omitPadding: true });
  return {
    sign,
    adminMac: (text) => createHmac("sha256", adminKey).update(text).digest("hex"),
    exportMac() {
      const mac = createHmac("sha256", exportKey);
      const running: RunningMac = {
        update: (text) => (mac.update(text), running),
        hex: () => mac.digest("hex"),
      };
      return running;
    },
    verify(data, macText) {
      // Compare the text, not decoded bytes: base64 decoding ignores a last character's unused
      // bits, so a tampered cursor could decode to the right MAC.
      return sameText(macText, sign(data));
    },
    async encrypt(plain) {
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, aes, enc.encode(plain));
      return `v1.${iv.toBase64()}.${new Uint8Array(ct).toBase64()}`;
    },
    async decrypt(sealed) {
      const [version, iv, ct] = sealed.split(".");
      if (version !== "v1" || !iv || !ct) throw new Error("unknown sealed secret format");
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: Uint8Array.fromBase64(iv) },
        aes,
        Uint8Array.fromBase64(ct),
      );
      return dec.decode(plain);
    },
  };
}

/** A fresh APP_KEY value. */
export const generateAppKey = (): string => crypto.getRandomValues(new Uint8Array(32)).toBase64();
