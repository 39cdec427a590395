import { NextResponse } from "next/server";
import { isConsoleReady } from "@/lib/console/health/readiness";

export const dynamic = "force-dynamic";

/** Readiness for a load balancer (lib/console/health/readiness.ts). Public (no session), so status only: no store or database names. */
export async function GET(): Promise<NextResponse> {
  const ready = await isConsoleReady();
  return NextResponse.json({ ready }, { status: ready ? 200 : 503, headers: { "cache-control": "no-store" } });
}
