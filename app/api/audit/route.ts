import type { NextRequest } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/shared/api-response";
import { listAuditFromSearch } from "@/lib/console/audit/list-audit";

export const dynamic = "force-dynamic";

/** Audit entries, newest first; same parameters as `/audit` (actor, prefix, resource, store, outcome, window/from/to, cursor). */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return respondWithRead(auth.session, "audit:read", (scope) => listAuditFromSearch(request.nextUrl.searchParams, scope));
}
