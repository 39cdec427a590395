import type { NextRequest } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/shared/api-response";
import { getLeaseDetailFromRoute } from "@/lib/console/leases/get-lease-detail";

export const dynamic = "force-dynamic";

const PREFIX_SEGMENTS = ["", "api", "leases"].length;

/**
 * One resource: current lease, holder timeline, events, waiters, tokens.
 * The segments are read from the raw path: route handlers get `params` already
 * percent-decoded, pages get them encoded, and a resource may itself contain "%"
 * — reading the path keeps exactly one decoding step (parseLeaseDetailParams).
 */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  const [store = "", ...resource] = request.nextUrl.pathname.split("/").slice(PREFIX_SEGMENTS);
  return respondWithRead(auth.session, "leases:read", (scope) => getLeaseDetailFromRoute({ store, resource }, { signal: request.signal, scope }));
}
