import type { NextRequest } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/shared/api-response";
import { getTtlAdviceFromSearch } from "@/lib/console/advice/get-ttl-advice";

export const dynamic = "force-dynamic";

/** TTL advice per prefix group; same parameters as `/advice` (store, prefix, window, from, to). */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return respondWithRead(auth.session, "leases:read", (scope) => getTtlAdviceFromSearch(request.nextUrl.searchParams, { signal: request.signal, scope }));
}
