import type { NextResponse } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/shared/api-response";
import { getStoresHealth } from "@/lib/console/health/health";
import type { HealthResponse } from "@/components/shell/health-query";

export const dynamic = "force-dynamic";

/** Health of every configured store: `{ checkedAt, stores: StoreHealth[] }`. Requires a session. */
export async function GET(): Promise<NextResponse> {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return respondWithRead(auth.session, "health:read", async () => {
    const { checkedAt, stores } = await getStoresHealth().current();
    const view: HealthResponse = { checkedAt: checkedAt.toISOString(), stores };
    return { ok: true, view };
  });
}
