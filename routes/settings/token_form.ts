import { z } from "zod";
import { SCOPES } from "../../core/types.ts";
import { EXPIRY_DAYS } from "../../web/tokens.tsx";
import { validate } from "../body.ts";
import type { FormFields } from "./env.ts";

const DAY_SECONDS = 86_400;

const tokenFields = z.object({
  name: z.string().default(""),
  scopes: z.preprocess(
    (v) => v === undefined ? [] : [v].flat(),
    z.array(z.enum(SCOPES, { message: "Choose scopes from the list." })),
  ),
  expires_in_days: z.enum(EXPIRY_DAYS, { message: "Choose an expiry from the list." }).default(""),
});

/** A new-token form as `createToken` takes it. */
export function tokenInput(form: FormFields) {
  const fields = validate(tokenFields, form);
  return {
    name: fields.name,
    scopes: [...new Set(fields.scopes)],
    expiresInSeconds: fields.expires_in_days ? Number(fields.expires_in_days) * DAY_SECONDS : null,
  };
}
