import type { NextRequest } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/shared/api-response";
import { getFacetsFromSearch } from "@/lib/console/facets/facets";

export const dynamic = "force-dynamic";

/**
 * Top owners, tasks and resources (and kinds) with counts, for a list's filters:
 * `view=leases` takes `/locks`'s parameters (state=expired counts expiries in the
 * window), `view=events` takes `/events`'s (window 24 h when none is given).
 */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  const search = request.nextUrl.searchParams;
  const permission = search.get("view") === "events" ? "events:read" : "leases:read";
  return respondWithRead(auth.session, permission, (scope) => getFacetsFromSearch(search, { scope }));
}
