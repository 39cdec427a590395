import { NextResponse } from "next/server";
import { requireApiSession, requirePermission, toPermissionResponse } from "@/lib/auth/session";
import { ConfigError } from "@/lib/console/config";
import { getStoresHealth } from "@/lib/console/health";
import type { HealthResponse } from "@/components/shell/health-query";

export const dynamic = "force-dynamic";

/** Health of every configured store: `{ checkedAt, stores: StoreHealth[] }`. Requires a session. */
export async function GET(): Promise<NextResponse> {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  try {
    requirePermission(auth.session, "health:read");
    const stores = await getStoresHealth();
    const body: HealthResponse = { checkedAt: new Date().toISOString(), stores };
    return NextResponse.json(body, { headers: { "cache-control": "no-store" } });
  } catch (error) {
    const forbidden = toPermissionResponse(error);
    if (forbidden) return forbidden;
    if (error instanceof ConfigError) return NextResponse.json({ error: error.message }, { status: 500 });
    throw error;
  }
}
