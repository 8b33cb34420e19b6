import type { Subject } from "../domain/types.ts";

/** Hono's typed context for API routes: the authenticated subject rides along. */
export interface ApiEnv {
  Variables: { subject: Subject };
}
