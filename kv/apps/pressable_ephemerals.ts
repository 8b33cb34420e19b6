/**
 * Ephemeral messages with elements their person may press (decisions.md, "Slack's shapes"): kept
 * for 30 minutes under their id, what they say sealed with a key derived from APP_KEY. Never
 * exported nor backed up (kv/key_kinds.ts), like the relayed notices.
 */
import type { Keyring } from "../../core/keyring.ts";
import type { Block } from "../../core/types.ts";
import { keys } from "../keys.ts";
import type { Store } from "../store/store.ts";

/** How long a person may press an ephemeral message's elements: Slack's 30 minutes. */
export const PRESSABLE_MS = 30 * 60_000;

/** An ephemeral message as its person may still press it. */
export interface PressableEphemeral {
  id: string;
  team_id: string;
  user_id: string;
  channel_id: string;
  app_id: string;
  bot_id: string;
  text: string;
  blocks: Block[];
  expires_at: string;
}

/** As stored: whom and whose in the clear, what it says sealed. */
type Sealed = Omit<PressableEphemeral, "text" | "blocks"> & { sealed: string };

type Sealing = { kv: Store; keyring: Keyring };

export async function keepEphemeral({ kv, keyring }: Sealing, e: PressableEphemeral) {
  const { text, blocks, ...whom } = e;
  const stored: Sealed = {
    ...whom,
    sealed: await keyring.encrypt(JSON.stringify({ text, blocks })),
  };
  await kv.set(keys.pressableEphemeral(e.id), stored, { expireIn: PRESSABLE_MS });
}

/** The ephemeral message `id`, while it may be pressed; null once gone or expired. */
export async function ephemeralOf(
  { kv, keyring }: Sealing,
  id: string,
): Promise<PressableEphemeral | null> {
  const stored = (await kv.get<Sealed>(keys.pressableEphemeral(id))).value;
  if (!stored || Date.parse(stored.expires_at) <= Date.now()) return null;
  const { sealed, ...whom } = stored;
  return { ...whom, ...JSON.parse(await keyring.decrypt(sealed)) };
}
