import type { NextRequest } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/shared/api-response";
import { resolveJumpFromSearch } from "@/lib/console/jump/resolve-jump";

export const dynamic = "force-dynamic";

/** The jump box: `?q=` a resource, prefix, owner, lease id or fencing token → `{ found, href, what }`. */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return respondWithRead(auth.session, "leases:read", (scope) => resolveJumpFromSearch(request.nextUrl.searchParams, { signal: request.signal, scope }));
}
