import { type Context, Hono } from "hono";
import { setCookie } from "hono/cookie";
import type { Ctx } from "../../domain/context.ts";
import { ApiError } from "../../core/errors.ts";
import type { Channel, Subject } from "../../core/types.ts";
import { listChannels, listTeamChannels } from "../../domain/channels/channels.ts";
import {
  approveInstall,
  AuthorizePageError,
  AuthorizeRedirectError,
  type AuthorizeRequest,
  denyInstall,
  readAuthorizeRequest,
} from "../../domain/apps/authorize.ts";
import { decide } from "../../domain/policy.ts";
import { csrfMatches } from "../../domain/people/sessions.ts";
import { findTeam } from "../../domain/people/workspace.ts";
import { ConsentPage } from "../../web/consent.tsx";
import type { FormState } from "../../web/forms.tsx";
import type { Viewer } from "../../web/layout.tsx";
import { MessagePage, SignInHelp } from "../../web/message.tsx";
import { RETURN_COOKIE, returnCookieOptions } from "../settings/cookie.ts";
import { notSignedIn, refused, sameOrigin, sessionViewer } from "../settings/guard.tsx";
import { screenHeaders, securityHeaders } from "../settings/headers.ts";
import { formStateOf, page, readForm } from "../settings/render.ts";

/** The authorization request's parameters, as the consent form carries them back. */
const PARAMS = [
  "response_type",
  "client_id",
  "redirect_uri",
  "scope",
  "state",
  "code_challenge",
  "code_challenge_method",
] as const;

const paramsOf = (source: Record<string, unknown>) =>
  Object.fromEntries(
    PARAMS.flatMap((name) => typeof source[name] === "string" ? [[name, source[name]]] : []),
  ) as Record<string, string>;

/** The page an untrustworthy request gets instead of a redirect. */
function cantInstall(c: Context, message: string, status: 400 | 403, viewer?: Viewer) {
  return page(
    c,
    <MessagePage title="Can't install this app" viewer={viewer}>
      <p>{message}</p>
    </MessagePage>,
    status,
  );
}

/** Signing in first: the sign-in link brings the person back to this very request. */
function signInFirst(ctx: Ctx, c: Context, appName: string) {
  const url = new URL(c.req.url);
  setCookie(c, RETURN_COOKIE, url.pathname + url.search, returnCookieOptions(ctx));
  return page(
    c,
    <MessagePage title={`Sign in to install ${appName}`}>
      <p>Installing an app takes a team admin or owner, signed in.</p>
      <SignInHelp />
      <p>Once signed in, you come back to this page.</p>
    </MessagePage>,
    401,
  );
}

/** Where an app's incoming webhook may post: the admin's open channels and the public ones. */
async function hookChannels(ctx: Ctx, subject: Subject): Promise<Channel[]> {
  const [mine, team] = await Promise.all([
    listChannels(ctx, subject),
    listTeamChannels(ctx, subject.team_id, subject),
  ]);
  const ids = new Set(mine.map((c) => c.id));
  return team.filter((c) =>
    !c.is_direct && !c.is_archived && (ids.has(c.id) || c.visibility === "public")
  );
}

/** GET and POST /oauth/authorize: the consent page and its answer. */
export function authorizeRoutes(ctx: Ctx) {
  const consent = async (
    c: Context,
    opts: { viewer: Viewer; request: AuthorizeRequest; form?: FormState; status?: 200 | 422 },
  ) => {
    const { viewer, request } = opts;
    const team = await findTeam(ctx, viewer.user.team_id);
    for (
      const [name, value] of Object.entries(securityHeaders([new URL(request.redirectUri).origin]))
    ) {
      c.header(name, value);
    }
    return page(
      c,
      <ConsentPage
        viewer={viewer}
        appName={request.app.name}
        teamName={team.name}
        scopes={request.scopes}
        params={paramsOf(c.req.method === "POST" ? (opts.form?.values ?? {}) : c.req.query())}
        channels={request.app.incoming_webhook ? await hookChannels(ctx, viewer.subject) : null}
        form={opts.form}
      />,
      opts.status ?? 200,
    );
  };

  /** The request, or the page or redirect that refuses it. */
  const requestOf = async (c: Context, params: Record<string, string>) => {
    try {
      return { request: await readAuthorizeRequest(ctx, params) };
    } catch (e) {
      if (e instanceof AuthorizePageError) return { answer: cantInstall(c, e.message, 400) };
      if (e instanceof AuthorizeRedirectError) return { answer: c.redirect(e.to, 302) };
      throw e;
    }
  };

  /** A member is told they can't; someone of another team is not told the app exists there. */
  const mayInstall = (c: Context, viewer: Viewer) => {
    const denial = decide(viewer.subject, "app.install", { team_id: viewer.user.team_id });
    return denial ? cantInstall(c, denial.message, 403, viewer) : null;
  };

  return new Hono()
    .use(screenHeaders)
    .get("/authorize", async (c) => {
      const { request, answer } = await requestOf(c, paramsOf(c.req.query()));
      if (!request) return answer;
      const { viewer } = await sessionViewer(ctx, c) ?? {};
      if (!viewer) return signInFirst(ctx, c, request.app.name);
      return mayInstall(c, viewer) ?? await consent(c, { viewer, request });
    })
    .post("/authorize", async (c) => {
      if (!sameOrigin(ctx, c)) return refused(c);
      const { session, viewer } = await sessionViewer(ctx, c) ?? {};
      if (!session || !viewer) return notSignedIn(c);
      const form = await readForm(c);
      if (!csrfMatches(session, form._csrf)) return refused(c);
      const { request, answer } = await requestOf(c, paramsOf(form));
      if (!request) return answer;
      const denied = mayInstall(c, viewer);
      if (denied) return denied;
      if (form.decision !== "approve") return c.redirect(denyInstall(request), 303);
      const channel = typeof form.channel === "string" ? form.channel : null;
      try {
        return c.redirect(await approveInstall(ctx, viewer.subject, request, channel), 303);
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        const state = formStateOf(e, form);
        return await consent(c, { viewer, request, form: state, status: 422 });
      }
    });
}
