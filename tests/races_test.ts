/**
 * Authority that no race can undo (decisions.md, "Under concurrency too"): two stores opened on
 * one KV file, as two instances hold it, run changes to the same person or token at the same
 * moment, many rounds; whichever lands first, a revocation, deactivation or demotion is never
 * undone, and a team never ends without an active owner.
 */
import assert from "node:assert/strict";
import type { Ctx } from "../domain/context.ts";
import { createKeyring, generateAppKey } from "../core/keyring.ts";
import { loadSettings } from "../core/settings.ts";
import { wrapStore } from "../kv/store/open.ts";
import { createToken, rotateTokenById } from "../domain/people/tokens.ts";
import { revokeTokenById } from "../domain/people/tokens.ts";
import { changeRole, deactivateUser, reactivateUser } from "../domain/people/people.ts";
import { createTeam, createUser } from "../domain/people/workspace.ts";
import { subjectOfPerson } from "../domain/principals.ts";
import { createLoginLink, openLoginLink, sessionFor, signIn } from "../domain/people/sessions.ts";
import { listUserTokens } from "../kv/tokens.ts";
import { listTeamUsers } from "../kv/workspace.ts";
import { getTokenByHash } from "../kv/tokens.ts";
import type { Role, User } from "../core/types.ts";
import { SCOPES } from "../core/types.ts";
import { isTokenLive } from "../domain/people/token_format.ts";
import { signedInCookie } from "./harness.ts";
import { sharedStore, startService } from "./processes.ts";

const ROUNDS = 12;

/** Two contexts on one temp KV file: what two instances of the service hold. */
async function twoInstances(fn: (a: Ctx, b: Ctx) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "races-" });
  const path = `${dir}/kv.sqlite3`;
  const env = { KV_PATH: path, APP_KEY: generateAppKey() };
  const open = async (): Promise<Ctx> => ({
    kv: wrapStore(await Deno.openKv(path), path),
    settings: loadSettings(env),
    keyring: await createKeyring(env.APP_KEY),
  });
  const a = await open();
  const b = await open();
  try {
    await fn(a, b);
  } finally {
    for (const ctx of [a, b]) {
      await ctx.kv.settled();
      ctx.kv.close();
    }
    await Deno.remove(dir, { recursive: true });
  }
}

async function person(ctx: Ctx, teamId: string, role: Role, name: string = role): Promise<User> {
  return await createUser(ctx, { teamId, name, type: "human", role }, null);
}

const settle = <T>(p: Promise<T>) => p.then(() => "ok", (e) => String(e?.message ?? e));

Deno.test("races: a role change at the moment of a revocation or rotation never brings a token back", async () => {
  await twoInstances(async (a, b) => {
    const team = await createTeam(a, "Races");
    const owner = subjectOfPerson(await person(a, team.id, "owner"));
    for (let round = 0; round < ROUNDS; round++) {
      const admin = await person(a, team.id, "admin", `admin ${round}`);
      const revoked = await createToken(a, admin, { scopes: [...SCOPES], actor: null });
      const rotated = await createToken(a, admin, { scopes: [...SCOPES], actor: null });
      const outcomes = await Promise.all([
        settle(revokeTokenById(a, revoked.token.id, subjectOfPerson(admin))),
        settle(rotateTokenById(b, rotated.token.id, subjectOfPerson(admin))),
        settle(changeRole(b, owner, admin.id, "member")),
        settle(changeRole(a, owner, admin.id, "admin")),
      ]);
      assert.deepEqual(outcomes, ["ok", "ok", "ok", "ok"]);
      for (const old of [revoked, rotated]) {
        const now = await getTokenByHash(a.kv, old.token.hash);
        assert.ok(now?.revoked_at, `round ${round}: a revoked token is live again`);
      }
    }
  });
});

Deno.test("races: a token minted while its user is deactivated or demoted can't escape it", async () => {
  await twoInstances(async (a, b) => {
    const team = await createTeam(a, "Races");
    const owner = subjectOfPerson(await person(a, team.id, "owner"));
    for (let round = 0; round < ROUNDS; round++) {
      const leaving = await person(a, team.id, "admin", `leaving ${round}`);
      const demoted = await person(a, team.id, "admin", `demoted ${round}`);
      const mint = (ctx: Ctx, user: User) =>
        settle(createToken(ctx, user, { scopes: ["messages:read"], actor: subjectOfPerson(user) }));
      await Promise.all([
        ...[a, b, a, b, a, b].map((ctx) => mint(ctx, leaving)),
        ...[a, b, a].map((ctx) => mint(ctx, demoted)),
        deactivateUser(b, owner, leaving.id),
        changeRole(a, owner, demoted.id, "member"),
      ]);
      const live = (await listUserTokens(a.kv, leaving.id)).filter((t) =>
        isTokenLive(t, Date.now())
      );
      assert.deepEqual(live.map((t) => t.id), [], `round ${round}: a token outlived deactivation`);
      for (const t of await listUserTokens(a.kv, demoted.id)) {
        assert.equal(t.role, "member", `round ${round}: a token kept the old role`);
      }
    }
  });
});

Deno.test("races: two owners demoting or deactivating each other at once leave an active owner", async () => {
  await twoInstances(async (a, b) => {
    for (let round = 0; round < ROUNDS; round++) {
      const team = await createTeam(a, `Races ${round}`);
      const x = await person(a, team.id, "owner", "x");
      const y = await person(a, team.id, "owner", "y");
      const [sx, sy] = [subjectOfPerson(x), subjectOfPerson(y)];
      const outcomes = await Promise.all(
        round % 2 === 0
          ? [settle(changeRole(a, sx, y.id, "admin")), settle(changeRole(b, sy, x.id, "member"))]
          : [settle(deactivateUser(a, sx, y.id)), settle(deactivateUser(b, sy, x.id))],
      );
      const owners = (await listTeamUsers(a.kv, team.id))
        .filter((u) => u.role === "owner" && !u.deactivated_at);
      assert.ok(owners.length >= 1, `round ${round}: no active owner left (${outcomes})`);
      assert.ok(outcomes.some((o) => o !== "ok"), `round ${round}: both changes landed`);
      assert.match(outcomes.find((o) => o !== "ok")!, /last active owner/);
    }
  });
});

Deno.test("races: reactivation gives back neither an old session nor an old sign-in link", async () => {
  await twoInstances(async (a, b) => {
    const team = await createTeam(a, "Races");
    await person(a, team.id, "owner");
    const admin = await person(a, team.id, "admin");
    const first = await createLoginLink(a, admin.id);
    const { cookie } = await signIn(b, first.url.split("/").pop()!);
    const unused = await createLoginLink(b, admin.id);
    assert.ok(await sessionFor(a, cookie));
    await deactivateUser(b, null, admin.id);
    await reactivateUser(a, null, admin.id);
    assert.equal(await sessionFor(a, cookie), null, "the old session works again");
    assert.equal(await sessionFor(b, cookie), null, "the old session works again");
    await assert.rejects(openLoginLink(a, unused.url.split("/").pop()!), /not known/);
    const fresh = await createLoginLink(a, admin.id);
    const again = await signIn(b, fresh.url.split("/").pop()!);
    assert.ok(await sessionFor(a, again.cookie), "a new link signs in after reactivation");
  });
});

Deno.test("races: a sign-in racing a deactivation never leaves a live session", async () => {
  await twoInstances(async (a, b) => {
    const team = await createTeam(a, "Races");
    await person(a, team.id, "owner");
    for (let round = 0; round < ROUNDS; round++) {
      const admin = await person(a, team.id, "admin", `admin ${round}`);
      const link = await createLoginLink(a, admin.id);
      const [signed] = await Promise.all([
        signIn(a, link.url.split("/").pop()!).catch(() => null),
        deactivateUser(b, null, admin.id),
      ]);
      if (signed) {
        assert.equal(await sessionFor(b, signed.cookie), null, `round ${round}: a live session`);
      }
    }
  });
});

/** A person signed in to the screen of `base`: the cookie, and the CSRF token its forms carry. */
async function screenSession(base: string, ctx: Ctx, userId: string) {
  const cookie = await signedInCookie(base, ctx, userId);
  const page = await fetch(`${base}/settings/integrations`, { headers: { Cookie: cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  assert.ok(csrf, "a form's CSRF token");
  return {
    post: (path: string, form: Record<string, string> = {}) =>
      fetch(`${base}/settings/integrations${path}`, {
        method: "POST",
        redirect: "manual",
        headers: {
          Cookie: cookie,
          Origin: base,
          "Content-Type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ ...form, _csrf: csrf }),
      }).then(async (r) => (await r.body?.cancel(), r.status)),
  };
}

Deno.test("races: on two service processes, revocations and demotions race role changes and lose nothing", async () => {
  const store = await sharedStore();
  const [a, b] = await Promise.all([startService(store.env), startService(store.env)]);
  try {
    const team = await createTeam(store.ctx, "Races");
    for (let round = 0; round < 6; round++) {
      const [x, y] = [
        await person(store.ctx, team.id, "owner", `x ${round}`),
        await person(store.ctx, team.id, "owner", `y ${round}`),
      ];
      const admin = await person(store.ctx, team.id, "admin", `admin ${round}`);
      const token = await createToken(store.ctx, admin, { scopes: [...SCOPES], actor: null });
      const [sx, sy, sAdmin] = await Promise.all([
        screenSession(a.url, store.ctx, x.id),
        screenSession(b.url, store.ctx, y.id),
        screenSession(a.url, store.ctx, admin.id),
      ]);
      // Every other owner steps down first, so that x and y are the last two.
      for (const u of await listTeamUsers(store.ctx.kv, team.id)) {
        if (u.role === "owner" && u.id !== x.id && u.id !== y.id && !u.deactivated_at) {
          await changeRole(store.ctx, null, u.id, "admin");
        }
      }
      const statuses = await Promise.all([
        sAdmin.post(`/tokens/${token.token.id}/revoke`),
        sy.post(`/people/${admin.id}/role`, { role: "member" }),
        sx.post(`/people/${y.id}/role`, { role: "admin" }),
        sy.post(`/people/${x.id}/role`, { role: "admin" }),
      ]);
      assert.equal(statuses[0], 303, `round ${round}: ${statuses}`);
      // y's demotion of the admin is refused only when x demoted y first: an admin can't.
      assert.ok(statuses[1] === 303 || statuses[2] === 303, `round ${round}: ${statuses}`);
      assert.ok(statuses.slice(2).some((s) => s !== 303), `round ${round}: both demotions landed`);
      const res = await fetch(`${b.url}/api/v1/channels`, {
        headers: { Authorization: `Bearer ${token.value}` },
      });
      await res.body?.cancel();
      assert.equal(res.status, 401, `round ${round}: the revoked token answers again`);
      const owners = (await listTeamUsers(store.ctx.kv, team.id))
        .filter((u) => u.role === "owner" && !u.deactivated_at);
      assert.ok(owners.length >= 1, `round ${round}: no active owner left`);
    }
  } finally {
    await Promise.all([a.kill(), b.kill()]);
    await store.cleanup();
  }
});
