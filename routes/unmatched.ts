/**
 * What a request no route takes is told: a path the API has under another method is 405 with
 * `Allow`; a path the API has under `/api/v1` says so; a path one slip away from a route's names
 * it (`/api/v1/chanels`: "Did you mean /api/v1/channels?"); anything else is a plain 404.
 */
import type { Context } from "hono";
import type { RouterRoute } from "hono/types";
import { closest } from "../core/suggest.ts";

interface Pattern {
  method: string;
  path: string;
  matches: (path: string) => boolean;
}

/** A route's path as a test of paths: `:name` is one segment, `*` anything. */
function patternOf({ method, path }: RouterRoute): Pattern {
  const source = path.split("/").map((part) =>
    part === "*"
      ? ".*"
      : part.startsWith(":")
      ? "[^/]+"
      : part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")
  ).join("/");
  const re = new RegExp(`^${source}/?$`);
  return { method, path, matches: (p) => re.test(p) };
}

/**
 * The route path `path` would be with its misspelt words put right, each one slip from a word the
 * route has in its place (the route's own `:params` take any segment); null when none is near.
 */
function nearPath(path: string, patterns: Pattern[]): string | null {
  const parts = path.replace(/\/$/, "").split("/");
  let best: { path: string; slips: number } | null = null;
  for (const { path: route } of patterns) {
    const words = route.split("/");
    if (words.length !== parts.length || route.includes("*")) continue;
    let slips = 0;
    const fixed: string[] = [];
    for (const [i, word] of words.entries()) {
      const given = parts[i];
      if (word.startsWith(":") || word === given) fixed.push(given);
      else if (closest(given, [word])) {
        fixed.push(word);
        slips++;
      } else break;
    }
    if (fixed.length === words.length && slips > 0 && (!best || slips < best.slips)) {
      best = { path: fixed.join("/"), slips };
    }
  }
  return best?.path ?? null;
}

/** The 404 handler for `routes()` (the app's, read once it is whole). */
export function unmatched(routes: () => RouterRoute[]) {
  let patterns: Pattern[] | undefined;
  return (c: Context) => {
    patterns ??= routes().filter((r) => r.method !== "ALL").map(patternOf);
    const path = c.req.path;
    const allowed = [...new Set(patterns.filter((p) => p.matches(path)).map((p) => p.method))];
    if (allowed.length > 0) {
      c.header("Allow", allowed.join(", "));
      return c.json({
        message: `${c.req.method} is not allowed on ${path}; it takes ${allowed.join(", ")}.`,
      }, 405);
    }
    const api = `/api/v1${path}`;
    if (!path.startsWith("/api/") && patterns.some((p) => p.matches(api))) {
      return c.json({ message: `Not found. The API lives under /api/v1: ${api}.` }, 404);
    }
    const near = nearPath(path, patterns);
    return c.json({ message: near ? `Not found. Did you mean ${near}?` : "Not found." }, 404);
  };
}
