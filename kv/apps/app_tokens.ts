/** App-level `xapp-` tokens (Socket Mode): by the SHA-256 of their value, and per app by age. */
import type { AppToken } from "../../core/app_records.ts";
import { commitOrThrow, getAll } from "../store/commit.ts";
import { keys } from "../keys.ts";
import type { Store } from "../store/store.ts";

export async function insertAppToken(kv: Store, hash: string, token: AppToken): Promise<void> {
  const op = kv.atomic().check({ key: keys.appToken(hash), versionstamp: null })
    .set(keys.appToken(hash), token)
    .set(keys.appTokenId(token.app_id, token.id), hash);
  await commitOrThrow(op, "create app-level token");
}

export const getAppToken = (kv: Store, hash: string) => kv.get<AppToken>(keys.appToken(hash));

/** The app's app-level tokens, oldest first, with the hashes that key them. */
export async function listAppTokens(
  kv: Store,
  appId: string,
): Promise<{ hash: string; token: AppToken }[]> {
  const hashes: string[] = [];
  for await (const e of kv.list<string>({ prefix: keys.appTokens(appId) })) hashes.push(e.value);
  const tokens = await getAll<AppToken>(kv, hashes.map((h) => keys.appToken(h)));
  return tokens.flatMap((e, i) => e.value ? [{ hash: hashes[i], token: e.value }] : []);
}

/** Takes an app-level token back: it opens no connection again. False when it was not there. */
export async function deleteAppToken(kv: Store, appId: string, tokenId: string) {
  const index = await kv.get<string>(keys.appTokenId(appId, tokenId));
  if (!index.value) return false;
  const op = kv.atomic().check(index).delete(index.key).delete(keys.appToken(index.value));
  return (await op.commit()).ok;
}
