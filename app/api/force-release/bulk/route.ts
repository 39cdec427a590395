import type { NextRequest } from "next/server";
import { bulkReleaseFromRequest } from "@/lib/console/release/force-release";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/shared/api-response";
import { mutationHandler } from "@/lib/console/shared/mutation-route";
import { listReleaseCandidates } from "@/lib/console/release/list-release-candidates";

export const dynamic = "force-dynamic";

/** The leases a bulk release under `prefix` (optionally in `store`) would end: lapsed or overdue, at most 100. */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  const search = request.nextUrl.searchParams;
  return respondWithRead(auth.session, "leases:read", (scope) =>
    listReleaseCandidates({ prefix: search.get("prefix") ?? "", ...(search.get("store") ? { store: search.get("store")! } : {}) }, { scope, signal: request.signal }),
  );
}

/** Ends the listed leases (body: prefix, reason, confirm, leases), each checked and audited on its own. 401 without a session. */
export const POST = mutationHandler(bulkReleaseFromRequest);
