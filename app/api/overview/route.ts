import type { NextRequest } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/shared/api-response";
import { getOverviewFromSearch } from "@/lib/console/overview/get-overview";

export const dynamic = "force-dynamic";

/** Overview tiles and chart series; same parameters as `/` (store, window, from, to, depth). */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return respondWithRead(auth.session, "leases:read", (scope) => getOverviewFromSearch(request.nextUrl.searchParams, { signal: request.signal, scope }));
}
