import type { NextRequest } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/api-response";
import { listEvents } from "@/lib/console/list-events";
import { parseEventsParams } from "@/lib/console/params";

export const dynamic = "force-dynamic";

/** Events, newest first; same parameters as `/events` (store, kind, prefix, owner, resource, window, from, to, cursor). */
export async function GET(request: NextRequest) {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return respondWithRead(auth.session, "events:read", async () => {
    const parsed = parseEventsParams(request.nextUrl.searchParams);
    return parsed.ok ? listEvents(parsed.params) : parsed;
  });
}
