import { Hono } from "hono";
import type { Ctx } from "../domain/context.ts";
import { addMember, listMembers, removeMember } from "../domain/channels/members.ts";
import { readJsonObject } from "./body.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

/** /channels/{channel}/members: list, add, remove. */
export function memberRoutes(ctx: Ctx) {
  return new Hono<ApiEnv>()
    .get("/:channel/members", requireScope("members:read"), async (c) => {
      return c.json({ data: await listMembers(ctx, c.var.subject, c.req.param("channel")) });
    })
    .post("/:channel/members", requireScope("members:write"), async (c) => {
      const member = await addMember(
        ctx,
        c.var.subject,
        c.req.param("channel"),
        async () => (await readJsonObject(c)).user_id,
      );
      return c.json({ data: member }, 201);
    })
    .delete("/:channel/members/:user", requireScope("members:write"), async (c) => {
      await removeMember(ctx, c.var.subject, c.req.param("channel"), c.req.param("user"));
      return c.body(null, 204);
    });
}
