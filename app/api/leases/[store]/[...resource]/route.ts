import type { NextRequest } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/api-response";
import { getLeaseDetailFromRoute } from "@/lib/console/get-lease-detail";

export const dynamic = "force-dynamic";

/** One resource: current lease, holder timeline, events, waiters, tokens. */
export async function GET(_request: NextRequest, context: { params: Promise<{ store: string; resource: string[] }> }) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  const params = await context.params;
  return respondWithRead(auth.session, "leases:read", () => getLeaseDetailFromRoute(params));
}
