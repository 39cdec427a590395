/**
 * Errors the browser must not read verbatim (driver messages, configuration
 * details, stack traces): logged on the server with a correlation id, answered
 * with a short message and the same id so a report can be matched to the log.
 */
import { randomUUID } from "node:crypto";
import { NextResponse } from "next/server";
import { getLogger } from "@/lib/log/logger";

/** Logs `error` with a fresh correlation id and returns the id. */
export function logServerError(error: unknown, context: string): string {
  const correlationId = randomUUID();
  getLogger("server-error").error({ err: error, correlationId }, context);
  return correlationId;
}

/** A 500 JSON answer `{ error, correlationId }`; the details only in the server log. */
export function respondWithServerError(error: unknown, publicMessage: string, status = 500): NextResponse {
  const correlationId = logServerError(error, publicMessage);
  return NextResponse.json({ error: publicMessage, correlationId }, { status, headers: { "cache-control": "no-store" } });
}
