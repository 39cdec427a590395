/**
 * What the browser may read about a store failure. Driver messages name hosts,
 * ports, users and SQL; they stay in the server log, with a correlation id the
 * browser gets alongside a short, generic reason.
 */
import { randomUUID } from "node:crypto";
import { LeaseError } from "@leasewatch/lease";
import { getLogger } from "@/lib/log/logger";

/** The same failure is logged at most once a minute per message, so a down store polled by many tabs does not flood the log. */
const LOG_REPEAT_MS = 60_000;
const MAX_REMEMBERED = 500;
const lastLogged = new Map<string, { at: number; correlationId: string }>();

function classify(error: unknown): string {
  const code = typeof error === "object" && error !== null && "code" in error ? String((error as { code: unknown }).code) : "";
  const message = error instanceof Error ? error.message : String(error);
  // Our own timeouts say nothing about the store's internals.
  if (/no answer within \d+ ms/.test(message)) return message.replace(/^.*?(no answer within \d+ ms).*$/, "$1");
  if (/ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|EPIPE|Connection is closed|connect/i.test(`${code} ${message}`)) return "unreachable";
  if (code === "28P01" || code === "28000" || /NOAUTH|WRONGPASS|authentication/i.test(message)) return "refused the console's credentials";
  if (code === "57014" || /statement timeout|canceling statement/i.test(message)) return "query timed out";
  return "store error";
}

/** Whether a store failure is the connection itself (the store is down), not an error of one read. */
export function isUnreachableError(error: unknown): boolean {
  return classify(error) === "unreachable";
}

/**
 * Whether a read ended because the request it served went away (the browser navigated or
 * closed the tab, a query was superseded): the store's ReadAbortedError, or the request's own
 * abort reason (Next's ResponseAborted, an AbortError). The store did nothing wrong.
 */
export function isCancelledRead(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, name } = error as { code?: unknown; name?: unknown };
  return code === "read_aborted" || name === "ResponseAborted" || name === "AbortError";
}

/** A short reason plus a reference, e.g. "unreachable (ref 3f2a…)"; the full error is logged under the same reference. */
export function toPublicStoreError(error: unknown, store: string): string {
  // A read the viewer's scope does not allow (lib/console/shared/scoped-store): our own words, nothing of the store's.
  if (error instanceof Error && (error as { code?: unknown }).code === "out_of_scope") return error.message;
  // Nobody is waiting for this answer, and an error line would send on-call after a store that is fine.
  if (isCancelledRead(error)) {
    getLogger("store-read").debug({ store }, "store read cancelled: the request went away");
    return "read cancelled";
  }
  // The store refused what the request asked (a page link's cursor it never issued, edited or
  // from another installation): the viewer's input, in the library's own words, and no store
  // failure, so no error line and no reference to chase.
  if (error instanceof LeaseError && error.code === "invalid_input") {
    getLogger("store-read").info({ store, detail: error.message }, "store refused the request's input");
    return `refused the request: ${error.message}`;
  }
  const reason = classify(error);
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const key = `${store}\u0000${detail}`;
  const now = Date.now();
  const seen = lastLogged.get(key);
  if (seen && now - seen.at < LOG_REPEAT_MS) return `${reason} (ref ${seen.correlationId})`;
  const correlationId = randomUUID().slice(0, 8);
  if (lastLogged.size >= MAX_REMEMBERED) lastLogged.clear();
  lastLogged.set(key, { at: now, correlationId });
  getLogger("store-read").error({ store, detail, ref: correlationId }, "store read failed");
  return `${reason} (ref ${correlationId})`;
}
