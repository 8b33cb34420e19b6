import type { Child } from "hono/jsx";
import type { Subject, User } from "../core/types.ts";
import { SETTINGS } from "./paths.ts";

/** Who is looking at a page, and what its forms need. */
export interface Viewer {
  user: User;
  /** The name of the person's team: a person in several workspaces knows which this is. */
  team: string;
  /** The person as the subject of the domain functions the pages call. */
  subject: Subject;
  csrf: string;
  /** Admins and owners see the team's parts of the screen; members don't, not even as links. */
  admin: boolean;
}

export type Section = "tokens" | "people" | "bots" | "apps" | "webhooks" | "incoming" | "audit";

const SECTIONS: { id: Section; label: string; href: string; admin: boolean }[] = [
  { id: "tokens", label: "Your tokens", href: SETTINGS, admin: false },
  { id: "people", label: "People", href: `${SETTINGS}/people`, admin: true },
  { id: "bots", label: "Bots", href: `${SETTINGS}/bots`, admin: true },
  { id: "apps", label: "Apps", href: `${SETTINGS}/apps`, admin: true },
  { id: "webhooks", label: "Outgoing webhooks", href: `${SETTINGS}/webhooks`, admin: true },
  { id: "incoming", label: "Incoming webhooks", href: `${SETTINGS}/incoming`, admin: true },
  { id: "audit", label: "Audit log", href: `${SETTINGS}/audit`, admin: true },
];

function Links({ viewer, current }: { viewer: Viewer; current?: Section }) {
  return (
    <nav aria-label="Integrations">
      <ul>
        {SECTIONS.filter((s) => viewer.admin || !s.admin).map((s) => (
          <li>
            <a href={s.href} aria-current={s.id === current ? "page" : undefined}>{s.label}</a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/**
 * The sections, and signing out. A phone gets them in a menu that opens without a script, so the
 * header is one row there; only one of the two is ever displayed, so only one is announced.
 */
function Nav({ viewer, current }: { viewer: Viewer; current?: Section }) {
  const here = SECTIONS.find((s) => s.id === current)?.label;
  return (
    <header class="top">
      <div class="wide">
        <Links viewer={viewer} current={current} />
      </div>
      <details class="menu narrow">
        <summary>
          Menu{here && <span class="here">{here}</span>}
        </summary>
        <Links viewer={viewer} current={current} />
      </details>
      <form method="post" action="/settings/sign-out" class="sign-out">
        <input type="hidden" name="_csrf" value={viewer.csrf} />
        <span>{viewer.user.name} · {viewer.team}</span> <button type="submit">Sign out</button>
      </form>
    </header>
  );
}

/** Every page of the screen: plain HTML, one stylesheet, one small optional script. */
export function Layout(
  props: {
    title: string;
    viewer?: Viewer;
    current?: Section;
    head?: Child;
    /**
     * The page's own URL, on a page that answers a form: the script puts it in the address bar,
     * so reloading shows the page rather than sending the form again (rotating twice, say).
     */
    canonical?: string;
    children?: Child;
  },
) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{props.title} · Integrations</title>
        <link rel="stylesheet" href="/settings/assets/app.css" />
        <script src="/settings/assets/app.js" defer></script>
        {props.head}
      </head>
      <body data-canonical={props.canonical}>
        {props.viewer && <Nav viewer={props.viewer} current={props.current} />}
        <main>
          <h1>{props.title}</h1>
          {props.children}
        </main>
      </body>
    </html>
  );
}
