import type { NextRequest } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithAuditExport } from "@/lib/console/audit/audit-export";

export const dynamic = "force-dynamic";

/** Every entry matching `/audit`'s filters as CSV or JSON (`format=`); see lib/console/audit/audit-export.ts. */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return respondWithAuditExport(auth.session, request.nextUrl.searchParams);
}
