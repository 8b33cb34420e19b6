/**
 * Headless Chromium for the settings screen's end-to-end tests: Debian's `chromium` package (or
 * CHROMIUM_PATH), driven by playwright-core. Nothing is downloaded.
 */
import { type Browser, chromium } from "npm:playwright-core@1.65.1";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** The Chromium to drive, or null when none is installed. */
export const chromiumPath: string | null = Deno.env.get("CHROMIUM_PATH") ??
  CANDIDATES.find(exists) ?? null;

if (!chromiumPath) {
  console.warn(
    "SKIPPED: the settings screen's browser tests need Chromium. Install Debian's `chromium` " +
      "package (apt-get install chromium), or set CHROMIUM_PATH.",
  );
}

/**
 * Flags for a closed network and a root user: no sandbox, no GPU, and none of the background
 * connections Chromium would otherwise keep trying. Each launch gets a fresh, empty profile.
 */
const ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Runs `fn` with a fresh headless browser, closed whatever happens. */
export async function withBrowser(fn: (browser: Browser) => Promise<void>): Promise<void> {
  const browser = await chromium.launch({
    executablePath: chromiumPath!,
    headless: true,
    args: ARGS,
  });
  try {
    await fn(browser);
  } finally {
    await browser.close();
  }
}

/** Options for a `Deno.test` that drives the browser: skipped only without Chromium. */
export const browserTest = {
  ignore: chromiumPath === null,
  // Playwright keeps its pipe to the browser and timers of its own between calls.
  sanitizeOps: false,
  sanitizeResources: false,
};
