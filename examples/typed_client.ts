/**
 * An integration written against types generated from openapi.yaml (openapi-typescript), with
 * openapi-fetch: every path, parameter, body and answer is checked by the compiler. docs/api.md
 * shows this file.
 *
 *   API_URL=http://localhost:8080/api/v1 API_TOKEN=tcp_... deno run \
 *     --lock=tests/deno.lock --frozen --allow-net --allow-env examples/typed_client.ts
 */
import createClient from "npm:openapi-fetch@0.17.0";
import type { paths } from "./api.d.ts";

const client = createClient<paths>({
  baseUrl: Deno.env.get("API_URL") ?? "http://localhost:8080/api/v1",
  headers: { Authorization: `Bearer ${Deno.env.get("API_TOKEN")}` },
});

const channels = await client.GET("/channels");
if (channels.error) throw new Error(channels.error.message);
const [channel] = channels.data.data;
console.log(`posting into #${channel.name}`);

const posted = await client.POST("/channels/{channel}/messages", {
  params: { path: { channel: channel.id } },
  body: { body: "Hello from a typed client" },
});
if (posted.error) throw new Error(posted.error.message);
console.log(`posted ${posted.data.data.id}`);

// Catching up: the same envelopes webhooks deliver, oldest first, paged with `after`.
const feed = await client.GET("/events", { params: { query: { limit: 10 } } });
if (feed.error) throw new Error(feed.error.message);
console.log(`${feed.data.data.length} events ready in the feed`);
