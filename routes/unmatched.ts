/**
 * What a request no route takes is told: a path the API has under another method is 405 with
 * `Allow`; a path the API has under `/api/v1` says so; anything else is a plain 404.
 */
import type { Context } from "hono";
import type { RouterRoute } from "hono/types";

interface Pattern {
  method: string;
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
  return { method, matches: (p) => re.test(p) };
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
    return c.json({ message: "Not found." }, 404);
  };
}
