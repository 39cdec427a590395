/**
 * `/api/audit/export`: every entry matching `/audit`'s filters as CSV or JSON
 * (`format=`), streamed in batches so it works over any number of entries. A
 * download counts as one read against the user's read rate.
 */
import { NextResponse } from "next/server";
import type { TokenBucketLimiter } from "@/lib/console/shared/rate-limit";
import { requirePermission, scopeFor, toPermissionResponse, type AppSession } from "@/lib/auth/session";
import { readLimiter, takeRead, tooManyReads } from "@/lib/console/shared/api-response";
import { AUDIT_EXPORT_FORMATS, streamAuditFromSearch, type AuditExportFormat } from "./list-audit";

const CONTENT_TYPES: Record<AuditExportFormat, string> = { csv: "text/csv; charset=utf-8", json: "application/json; charset=utf-8" };

export function respondWithAuditExport(session: AppSession, searchParams: URLSearchParams, reads: TokenBucketLimiter = readLimiter): Response {
  try {
    requirePermission(session, "audit:read");
  } catch (error) {
    const forbidden = toPermissionResponse(error);
    if (forbidden) return forbidden;
    throw error;
  }
  const limited = takeRead(session, reads);
  if (limited) return tooManyReads(limited.retryAfterSeconds);
  const search = new URLSearchParams(searchParams);
  const format = search.get("format") ?? "csv";
  if (!(AUDIT_EXPORT_FORMATS as readonly string[]).includes(format)) {
    return NextResponse.json({ error: `Bad parameter "format": must be one of ${AUDIT_EXPORT_FORMATS.join(", ")}`, param: "format" }, { status: 400 });
  }
  search.delete("format");
  for (const paging of ["cursor", "prev", "limit", "entry"]) search.delete(paging);
  const result = streamAuditFromSearch(search, format as AuditExportFormat, scopeFor(session, "audit:read"));
  if (!result.ok) return NextResponse.json({ error: `Bad parameter "${result.problem.param}": ${result.problem.message}`, param: result.problem.param }, { status: 400 });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  return new Response(result.view, {
    headers: {
      "content-type": CONTENT_TYPES[format as AuditExportFormat],
      "content-disposition": `attachment; filename="leasewatch-audit-${stamp}.${format}"`,
      "cache-control": "no-store",
    },
  });
}
