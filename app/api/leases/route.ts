import type { NextRequest } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/api-response";
import { listLeases } from "@/lib/console/list-leases";
import { parseLeasesParams } from "@/lib/console/params";

export const dynamic = "force-dynamic";

/** Current leases (or, with state=expired, leases that expired in the window); same parameters as `/locks`. */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return respondWithRead(auth.session, "leases:read", async () => {
    const parsed = parseLeasesParams(request.nextUrl.searchParams);
    return parsed.ok ? listLeases(parsed.params) : parsed;
  });
}
