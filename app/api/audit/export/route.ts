import { NextResponse, type NextRequest } from "next/server";
import { requireApiSession, requirePermission, scopeFor, toPermissionResponse } from "@/lib/auth/session";
import { AUDIT_EXPORT_FORMATS, streamAuditFromSearch, type AuditExportFormat } from "@/lib/console/list-audit";

export const dynamic = "force-dynamic";

const CONTENT_TYPES: Record<AuditExportFormat, string> = { csv: "text/csv; charset=utf-8", json: "application/json; charset=utf-8" };

/** Every entry matching `/audit`'s filters as CSV or JSON (`format=`), streamed in batches so it works over any number of entries. */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  try {
    requirePermission(auth.session, "audit:read");
  } catch (error) {
    const forbidden = toPermissionResponse(error);
    if (forbidden) return forbidden;
    throw error;
  }
  const search = new URLSearchParams(request.nextUrl.searchParams);
  const format = search.get("format") ?? "csv";
  if (!(AUDIT_EXPORT_FORMATS as readonly string[]).includes(format)) {
    return NextResponse.json({ error: `Bad parameter "format": must be one of ${AUDIT_EXPORT_FORMATS.join(", ")}`, param: "format" }, { status: 400 });
  }
  search.delete("format");
  for (const paging of ["cursor", "prev", "limit", "entry"]) search.delete(paging);
  const result = streamAuditFromSearch(search, format as AuditExportFormat, scopeFor(auth.session, "audit:read"));
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
