import { createApp } from "./routes/app.ts";
import { serveForever } from "./routes/serve.ts";
import { startDeliveryEngine } from "./delivery/engine.ts";
import { loadSettings, SettingsError } from "./domain/settings.ts";
import { loadKeyring, openStore } from "./kv/open.ts";
import type { Ctx } from "./domain/context.ts";

function settingsOrExit() {
  try {
    return loadSettings(Deno.env.toObject());
  } catch (e) {
    if (!(e instanceof SettingsError)) throw e;
    console.error(e.message);
    Deno.exit(1);
  }
}

const settings = settingsOrExit();
const kv = await openStore(settings);
const ctx: Ctx = { kv, settings, keyring: await loadKeyring(settings) };
const app = createApp(ctx);
// With the platform off nothing is delivered; pending jobs wait until it is switched back on.
if (settings.integrationsEnabled) startDeliveryEngine(ctx);

try {
  serveForever({
    port: settings.port,
    onListen: ({ port }) => {
      const where = settings.kvPath?.replace(/\/\/[^/@]*@/, "//") ?? "Deno Deploy KV";
      console.log(`Listening on ${settings.baseUrl} (port ${port}), KV at ${where}`);
    },
  }, app.fetch);
} catch (e) {
  if (!(e instanceof Deno.errors.AddrInUse)) throw e;
  console.error(`PORT ${settings.port} is already in use: stop what listens there, or set PORT.`);
  Deno.exit(1);
}
