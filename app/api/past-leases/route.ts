import type { NextRequest } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/shared/api-response";
import { getPastLeasesFromSearch } from "@/lib/console/past/get-past-leases";

export const dynamic = "force-dynamic";

/** What was held at `at` (required), rebuilt from history; the leases page's filters apply. */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return respondWithRead(auth.session, "leases:read", (scope) => getPastLeasesFromSearch(request.nextUrl.searchParams, { signal: request.signal, scope }));
}
