/**
 * Slack's SDKs (Bolt, @slack/socket-mode, @slack/webhook: undici underneath) need Node 22's APIs,
 * which Deno 2.5 (Deno Deploy's) lacks: the service runs there, these clients only on Deno 2.9,
 * so the tests that drive them are skipped on 2.5 and say why.
 */
const { deno } = Deno.version;
export const slackSdks = deno.localeCompare("2.9.0", undefined, { numeric: true }) >= 0;

/** What the name of a test that drives them ends with, as the suite reports it skipped. */
export const SKIPPED_WITHOUT_SDKS = slackSdks
  ? ""
  : ` (skipped on Deno ${deno}: Slack's SDKs need Node 22's APIs)`;
