import type { Subject } from "../core/types.ts";
import type { ObservedVars } from "./middleware/observe.ts";

/** Hono's typed context for API routes: the authenticated subject rides along. */
export interface ApiEnv {
  Variables: ObservedVars & { subject: Subject };
}
