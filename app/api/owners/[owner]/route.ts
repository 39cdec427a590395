import type { NextRequest } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/shared/api-response";
import { getOwnerFromRoute } from "@/lib/console/owners/get-owner";

export const dynamic = "force-dynamic";

const PREFIX_SEGMENTS = ["", "api", "owners"].length;

/**
 * One owner: what it holds now, its latest events and troubles, when it was last
 * seen, alive or not. The owner is read from the raw path (route `params` come
 * decoded already, and an owner may contain "%"), so it is decoded exactly once.
 */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  const segments = request.nextUrl.pathname.split("/").slice(PREFIX_SEGMENTS);
  return respondWithRead(auth.session, "leases:read", async (scope) =>
    segments.length === 1
      ? getOwnerFromRoute(segments[0]!, request.nextUrl.searchParams, { signal: request.signal, scope })
      : { ok: false, problem: { param: "owner", message: "must be one path segment (encode \"/\" as %2F)" } },
  );
}
