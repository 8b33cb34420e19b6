import { errorFields, log } from "../core/log.ts";
import { ReaderCutOff } from "./event_stream_sse.ts";

/** What `serveForever` hands back: a way to stop listening and finish what is in flight. */
export interface Serving {
  shutdown(): Promise<void>;
}

const RELISTEN_AFTER_MS = 100;

/**
 * What fails after the app answered (the error handler answers everything before): a response
 * body that errors. An event stream cut off for a slow reader errors on purpose (the stream hub
 * logged it); anything else is logged as the failure it is.
 */
function responseFailed(e: unknown): Response {
  if (!(e instanceof ReaderCutOff)) log.error("http: a response failed", errorFields(e));
  return new Response(null, { status: 500 });
}

/**
 * Deno.serve, listening again whenever its accept loop dies. A flood of slow or idle clients can
 * use up the process's file descriptors; Deno's accept loop then fails with "Too many open files"
 * and closes the listener, which would leave a process that runs but serves nobody (or, with the
 * failure unhandled, exits). Here it is reported once and the port is taken again as soon as the
 * runtime allows it, so the service serves again the moment the connections are released.
 * A port that is taken by someone else at start is the caller's to report (Deno.errors.AddrInUse).
 */
export function serveForever(
  options: Deno.ServeTcpOptions,
  handler: Deno.ServeHandler,
): Serving {
  options = { onError: responseFailed, ...options };
  let server = Deno.serve(options, handler);
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      try {
        await server.finished;
      } catch (e) {
        log.error("http: accepting connections failed; listening again", errorFields(e));
      }
      while (!stopping) {
        await new Promise((r) => setTimeout(r, RELISTEN_AFTER_MS));
        try {
          server = Deno.serve({ ...options, onListen() {} }, handler);
          break;
        } catch {
          // Still out of descriptors, or the port not yet released: try again shortly.
        }
      }
    }
  })();
  return {
    async shutdown() {
      stopping = true;
      await server.shutdown();
      await loop;
    },
  };
}
