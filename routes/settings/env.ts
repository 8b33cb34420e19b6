import type { Session } from "../../core/types.ts";
import type { Viewer } from "../../web/layout.tsx";
import type { ObservedVars } from "../middleware/observe.ts";

/** A submitted form's fields: one value, or every value of a repeated field. */
export type FormFields = Record<string, string | string[]>;

/** What the settings screen's handlers find on the context once signed in. */
export interface SettingsEnv {
  Variables: ObservedVars & { session: Session; viewer: Viewer; form: FormFields };
}
