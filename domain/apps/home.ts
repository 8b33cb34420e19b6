/**
 * App Home (decisions.md, "App Home"): an app with `features.app_home.home_tab_enabled` publishes
 * a Home for each person (`views.publish`), and a person opens it (`GET /api/v1/apps/{app}/home`):
 * the app hears Slack's `app_home_opened` (when it asked for that event), with the person's
 * direct message with its bot, and the person gets the Home published for them, if any. A Home is
 * a one-view stack under an id made from the app's and the person's, so it is found without an
 * index and republished in place; its elements are pressed as a modal's are.
 */
import type { Ctx } from "../context.ts";
import type { Subject, User } from "../../core/types.ts";
import type { StoredView, ViewStack } from "../../core/app_records.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { derivedId, randomBase62 } from "../../core/random.ts";
import { retrying } from "../../core/retry.ts";
import { installOfBot } from "./bot_install.ts";
import { tellApp } from "./app_events.ts";
import { stackById, writeStack } from "../../kv/apps/views.ts";
import { getUser } from "../../kv/workspace.ts";
import { authorize } from "../policy.ts";
import { directChannelOf } from "../channels/direct.ts";
import { type LiveInstall, liveInstall } from "./live_install.ts";
import { personView, readViewSpec, slackView } from "./views.ts";

/** How long a Home is kept after it was last published: a person away a year finds it still. */
const HOME_MS = 400 * 24 * 3_600_000;

/** The id of an app's Home for a person: its stack's and its one view's. */
const homeId = (appId: string, userId: string) => derivedId(`app-home|${appId}|${userId}`);

const noHome = () => notFound("No such app in this team, or it has no Home.");

/** The app's install in the team, live, with a Home tab; 404 otherwise. */
async function homeApp(ctx: Ctx, teamId: string, appId: string): Promise<LiveInstall> {
  const live = await liveInstall(ctx, { teamId, appId });
  if (!live || !live.app.app_home?.home_tab_enabled) throw noHome();
  return live;
}

/** The Home published for a person, as stored, or null. */
async function homeOf(ctx: Ctx, appId: string, userId: string) {
  // A Home's stack has its view's id: read at once, without the view's index.
  const entry = await stackById(ctx.kv, homeId(appId, userId));
  return entry?.value.views[0].type === "home" ? entry : null;
}

/**
 * GET /apps/{app}/home: a person opens an app's Home. The app hears `app_home_opened` (through
 * the delivery engine, retried like any event, or its Socket Mode connections); the answer is the
 * Home published for the person, or null before the app published one, with whether the app was
 * told (then its first Home may come within Slack's 3 seconds: `homeNow` reads it again).
 */
export async function openHome(ctx: Ctx, subject: Subject, appId: string) {
  authorize(subject, "app.home_open", { team_id: subject.team_id });
  const live = await homeApp(ctx, subject.team_id, appId);
  const person = await getUser(ctx.kv, subject.user_id);
  if (!person) throw noHome();
  const dm = await directChannelOf(ctx, [live.bot as User, person]);
  const home = await homeOf(ctx, appId, subject.user_id);
  const told = await tellOpened(ctx, { live, person, channelId: dm.id, home: home?.value ?? null });
  return { view: home ? personView(home.value, home.value.views[0]) : null, told };
}

/** The Home published for the person now, or null: read again while its app answers an open. */
export async function homeNow(ctx: Ctx, subject: Subject, appId: string) {
  authorize(subject, "app.home_open", { team_id: subject.team_id });
  const home = await homeOf(ctx, appId, subject.user_id);
  return home ? personView(home.value, home.value.views[0]) : null;
}

/** `app_home_opened` to the app, if it asked for it. */
const tellOpened = (
  ctx: Ctx,
  { live, person, channelId, home }: {
    live: LiveInstall;
    person: User;
    channelId: string;
    home: ViewStack | null;
  },
) =>
  tellApp(ctx, {
    live,
    botEvent: "app_home_opened",
    type: "app.home_opened",
    channelId,
    data: {
      user_id: person.id,
      tab: "home",
      view: home ? slackView(home, home.views[0]) : null,
    },
  });

/**
 * views.publish: the app whose bot calls sets the Home of one person of its team (`hash`, when
 * given, must be the current one's). The Home keeps its id; each publish changes its hash.
 */
export function publishHome(
  ctx: Ctx,
  subject: Subject,
  { userId, view, hash }: { userId: string; view: unknown; hash?: string },
) {
  const wanted = readViewSpec(view, { kind: "home" });
  return retrying("publish a home", async () => {
    const live = await homeAppOfBot(ctx, subject);
    const [person, entry] = await Promise.all([
      getUser(ctx.kv, userId),
      homeOf(ctx, live.app.id, userId),
    ]);
    if (!person || person.team_id !== subject.team_id || person.type !== "human") {
      throw invalid("user_id", "No such person in this team.");
    }
    const id = homeId(live.app.id, person.id);
    if (hash && entry && hash !== entry.value.views[0].hash) {
      throw invalid("hash", "The Home changed since that hash: read it again.");
    }
    const published: StoredView = {
      ...wanted,
      id,
      hash: `${Math.floor(Date.now() / 1000)}.${randomBase62(8)}`,
      previous_view_id: null,
    };
    const stack: ViewStack = {
      id,
      app_id: live.app.id,
      team_id: subject.team_id,
      user_id: person.id,
      channel_id: "",
      bot_user_id: subject.user_id,
      views: [published],
      closed_at: null,
      expires_at: new Date(Date.now() + HOME_MS).toISOString(),
    };
    if (!await writeStack(ctx.kv, { entry, stack })) return null;
    return slackView(stack, published);
  });
}

/** The app whose bot calls, live in its team, with a Home tab; 404 otherwise. */
async function homeAppOfBot(ctx: Ctx, subject: Subject): Promise<LiveInstall> {
  const mine = await installOfBot(ctx, { teamId: subject.team_id, botId: subject.user_id });
  if (!mine) throw noHome();
  return await homeApp(ctx, subject.team_id, mine.app_id);
}
