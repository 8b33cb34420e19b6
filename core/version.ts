import config from "../deno.json" with { type: "json" };

/** The service's version (semver), as deno.json gives it and CHANGELOG.md describes it. */
export const VERSION: string = config.version;
