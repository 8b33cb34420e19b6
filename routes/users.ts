import { Hono } from "hono";
import { z } from "zod";
import type { Ctx } from "../domain/context.ts";
import { changeEmail } from "../domain/people/email.ts";
import { personView } from "../domain/views.ts";
import { readBody } from "./body.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

const profile = z.object({ email: z.string().max(1_000).nullable() });

/** /users/{user}: a person's profile, which the team's admins change. */
export function userRoutes(ctx: Ctx) {
  return new Hono<ApiEnv>()
    .patch("/:user", requireScope("members:write"), async (c) => {
      const { email } = await readBody(c, profile);
      const user = await changeEmail(ctx, c.var.subject, { userId: c.req.param("user"), email });
      return c.json({ data: personView(user) });
    });
}
