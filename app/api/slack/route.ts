import type { NextRequest } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/shared/api-response";
import { getRenewalSlackFromSearch } from "@/lib/console/advice/get-ttl-advice";

export const dynamic = "force-dynamic";

/** The renewal-slack histogram and close calls (store, prefix, window, from, to). */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return respondWithRead(auth.session, "leases:read", (scope) => getRenewalSlackFromSearch(request.nextUrl.searchParams, { signal: request.signal, scope }));
}
