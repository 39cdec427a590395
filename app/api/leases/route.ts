import type { NextRequest } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/shared/api-response";
import { listLeasesFromSearch } from "@/lib/console/leases/list-leases";

export const dynamic = "force-dynamic";

/** Current leases (or, with state=expired, leases that expired in the window); same parameters as `/locks`. */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return respondWithRead(auth.session, "leases:read", (scope) => listLeasesFromSearch(request.nextUrl.searchParams, { signal: request.signal, scope }));
}
