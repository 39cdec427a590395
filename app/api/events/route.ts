import type { NextRequest } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/shared/api-response";
import { listEventsFromSearch } from "@/lib/console/events/list-events";

export const dynamic = "force-dynamic";

/** Events, newest first; same parameters as `/events` (store, kind, prefix, owner, resource, window, from, to, cursor). */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return respondWithRead(auth.session, "events:read", (scope) => listEventsFromSearch(request.nextUrl.searchParams, { signal: request.signal, scope }));
}
