import type { NextRequest } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/api-response";
import { getOverview } from "@/lib/console/get-overview";
import { parseOverviewParams } from "@/lib/console/params";

export const dynamic = "force-dynamic";

/** Overview tiles and chart series; same parameters as `/` (store, window, from, to, depth). */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return respondWithRead(auth.session, "leases:read", async () => {
    const parsed = parseOverviewParams(request.nextUrl.searchParams);
    return parsed.ok ? getOverview(parsed.params) : parsed;
  });
}
