import type { Child } from "hono/jsx";
import { Layout, type Viewer } from "./layout.tsx";

/** A page that only says something: signed out, refused, not found, a link used up. */
export function MessagePage(
  props: { title: string; viewer?: Viewer; head?: Child; children?: Child },
) {
  return (
    <Layout title={props.title} viewer={props.viewer} head={props.head}>
      <div class="message">{props.children}</div>
    </Layout>
  );
}

/**
 * What opening a sign-in link shows: nothing is used until the button is pressed, so a link
 * previewer or mail scanner that fetches the link leaves it working.
 */
export function SignInPage(props: { name: string; action: string }) {
  return (
    <MessagePage title="Sign in">
      <form method="post" action={props.action}>
        <p>This link signs you in to the integrations settings, once.</p>
        <button type="submit">Sign in as {props.name}</button>
      </form>
    </MessagePage>
  );
}

/** How to get in: a login link from whoever runs the service. */
export function SignInHelp() {
  return (
    <p>
      Ask whoever runs this service for a sign-in link:{" "}
      <code>deno task admin login-link --user &lt;your user id&gt;</code>. A link works once, for 15
      minutes.
    </p>
  );
}
