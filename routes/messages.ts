import { Hono } from "hono";
import { z } from "zod";
import type { Ctx } from "../domain/context.ts";
import { listMessages } from "../domain/messages/list.ts";
import { messageView } from "../domain/views.ts";
import { postMessage, showMessage } from "../domain/messages/messages.ts";
import { deleteMessage, editMessage } from "../domain/messages/changes.ts";
import { settle } from "../core/settled.ts";
import { readBody, readQuery, uuidText } from "./body.ts";
import type { ApiEnv } from "./env.ts";
import { requireScope } from "./middleware/scope.ts";

const uuidField = (field: string) => uuidText(`The ${field} must be a uuid.`);

const bodyField = z.string({ error: "The body must be a string." }).nullish();
/**
 * Checked by the domain (domain/messages/blocks.ts, attachments.ts), where the pointers of their
 * faults are made.
 */
const blocksField = z.unknown().optional();

const newMessage = z.object({
  body: bodyField,
  blocks: blocksField,
  attachments: blocksField,
  metadata: blocksField,
  client_uuid: uuidField("client_uuid").nullish(),
  reply_to_id: uuidField("reply_to_id").nullish(),
  thread_root_id: uuidField("thread_root_id").nullish(),
  sent_to_channel: z.boolean({ error: "The sent_to_channel must be true or false." }).nullish(),
  poll: z.object({
    options: z.array(z.string({ error: "Each option must be a string." }), {
      error: "The poll's options are required: an array of 2 to 10 strings.",
    }).max(100, "A poll has 2 to 10 options."),
    multiple: z.boolean({ error: "The poll's multiple must be true or false." }).nullish(),
  }, { error: "The poll must be an object with options." }).nullish(),
});

const messageEdit = z.object({
  body: bodyField,
  blocks: blocksField,
  attachments: blocksField,
  metadata: blocksField,
});

const LIMIT_RULE = "The limit must be a whole number from 1 to 100.";

/** `GET .../messages`: a page (`page`, or `cursor`), of `limit` (50 unless given), of a thread. */
const listQuery = z.object({
  page: z.string().optional(),
  cursor: z.string().optional(),
  thread_root_id: z.string().optional(),
  limit: z.coerce.number({ error: LIMIT_RULE }).int(LIMIT_RULE).min(1, LIMIT_RULE)
    .max(100, LIMIT_RULE).optional(),
});

/** /channels/{channel}/messages: list, post, show, edit, delete. */
export function messageRoutes(ctx: Ctx) {
  return new Hono<ApiEnv>()
    .get("/:channel/messages", requireScope("messages:read"), async (c) => {
      const channelId = c.req.param("channel");
      const path = `${ctx.settings.baseUrl}/api/v1/channels/${channelId}/messages`;
      const query = readQuery(c, listQuery);
      const page = await listMessages(ctx, c.var.subject, channelId, { query, path });
      return c.json({ data: page.messages.map(messageView), links: page.links, meta: page.meta });
    })
    .post("/:channel/messages", requireScope("messages:write"), async (c) => {
      const input = await settle(readBody(c, newMessage));
      const { message, replayed } = await postMessage(
        ctx,
        c.var.subject,
        c.req.param("channel"),
        input,
      );
      if (replayed) c.header("Idempotent-Replayed", "true");
      return c.json({ data: messageView(message) }, replayed ? 200 : 201);
    })
    .get("/:channel/messages/:message", requireScope("messages:read"), async (c) => {
      const { channel, message } = c.req.param();
      return c.json({ data: messageView(await showMessage(ctx, c.var.subject, channel, message)) });
    })
    .patch("/:channel/messages/:message", requireScope("messages:write"), async (c) => {
      const { channel, message } = c.req.param();
      const input = await settle(readBody(c, messageEdit));
      const edited = await editMessage(ctx, c.var.subject, {
        channelId: channel,
        messageId: message,
      }, input);
      return c.json({ data: messageView(edited) });
    })
    .delete("/:channel/messages/:message", requireScope("messages:write"), async (c) => {
      const { channel, message } = c.req.param();
      await deleteMessage(ctx, c.var.subject, channel, message);
      return c.body(null, 204);
    });
}
