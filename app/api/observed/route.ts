import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/shared/api-response";
import { getObservedView } from "@/lib/console/shared/observed";

export const dynamic = "force-dynamic";

/** The observed stores (locks the library does not own) as the observer last recorded them, within the viewer's scope. */
export async function GET() {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return respondWithRead(auth.session, "leases:read", async (scope) => ({ ok: true, view: await getObservedView({ scope }) }));
}
