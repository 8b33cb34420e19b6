import type { Context } from "hono";
import { notFound } from "../core/errors.ts";
import { VERSION } from "../core/version.ts";

/**
 * GET /api/v1/docs: openapi.yaml rendered by Redoc, for a person reading the API. Redoc is
 * vendored (web/vendor/README.md) so the page works with no network, and runs under a policy as
 * strict as the settings screen's: scripts only from this origin and only the pinned file (its
 * integrity is checked by the browser), no inline code. Redoc's styled-components write their
 * rules into <style> elements; a per-response nonce lets exactly those through.
 */
const REDOC = {
  file: "redoc-3.0.1.standalone.js",
  integrity: "sha384-j07qRKHNNmcwU1/Y1elJc7pDLHXP/QfbQXTtSkbOJ7uYGJikqAzsFVbY2zR9FqOT",
};

const script = await Deno.readFile(new URL(`../web/vendor/${REDOC.file}`, import.meta.url));

function nonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function policy(styleNonce: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${styleNonce}'`,
    // Redoc inlines its icon font; the "docs by Redocly" logo it fetches from its CDN is refused.
    "font-src data:",
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

function pageHtml(styleNonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta property="csp-nonce" nonce="${styleNonce}">
<title>API reference · Team chat integrations ${VERSION}</title>
<script type="module" src="docs/${REDOC.file}" integrity="${REDOC.integrity}"></script>
</head>
<body>
<noscript><p>This reference needs JavaScript. The document it shows is
<a href="openapi.yaml">openapi.yaml</a>.</p></noscript>
<header><small>The service answering here runs version ${VERSION}.</small></header>
<redoc spec-url="openapi.yaml" disable-telemetry="true"></redoc>
</body>
</html>
`;
}

/** GET /api/v1/docs: the reference page. */
export const apiReferenceHandler = (c: Context) => {
  const styleNonce = nonce();
  return c.html(pageHtml(styleNonce), 200, {
    "Content-Security-Policy": policy(styleNonce),
    "Cache-Control": "no-store",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
  });
};

/** GET /api/v1/docs/:file: the script, under a name that changes with its version. */
export const redocScriptHandler = (c: Context) => {
  if (c.req.param("file") !== REDOC.file) throw notFound();
  return c.body(script, 200, {
    "Content-Type": "text/javascript; charset=utf-8",
    "Cache-Control": "public, max-age=31536000, immutable",
    "X-Content-Type-Options": "nosniff",
  });
};
