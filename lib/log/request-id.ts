/**
 * Request ids for the console. Next.js hands route handlers and server actions no hook
 * around a request, so installRequestIds() (from instrumentation.ts) takes each request
 * as it reaches the Node.js HTTP server: it picks the id, puts it in the log context for
 * everything the request runs, in the request's `x-request-id` header (so handlers can
 * read it too) and in the response's (so a user or a proxy can quote it).
 *
 * The id is the client's `x-request-id` when it is a plain token (a load balancer's id
 * then matches across both logs), otherwise a fresh UUID. It is for finding log lines
 * only: the audit log records a request id of its own, which no client can choose.
 */
import { randomUUID } from "node:crypto";
import diagnosticsChannel from "node:diagnostics_channel";
import type { IncomingMessage, ServerResponse } from "node:http";
import { enterLogContext } from "./context";

export const REQUEST_ID_HEADER = "x-request-id";
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const INSTALLED_KEY = Symbol.for("leasewatch.request-ids");
type GlobalWithFlag = typeof globalThis & { [INSTALLED_KEY]?: boolean };

/** The client's id when it is a plain token, else a new one. */
export function chooseRequestId(sent: string | string[] | undefined): string {
  return typeof sent === "string" && CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID();
}

/** Gives every request this process serves an id (see above). Idempotent. */
export function installRequestIds(): void {
  const g = globalThis as GlobalWithFlag;
  if (g[INSTALLED_KEY]) return;
  g[INSTALLED_KEY] = true;
  diagnosticsChannel.subscribe("http.server.request.start", (message) => {
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
    const reqId = chooseRequestId(request.headers[REQUEST_ID_HEADER]);
    request.headers[REQUEST_ID_HEADER] = reqId;
    if (!response.headersSent) response.setHeader(REQUEST_ID_HEADER, reqId);
    // The server emits "request" right after this channel, in the same call: the handler
    // and every promise it starts run in this context.
    enterLogContext({ reqId });
  });
}
