import { NextResponse } from "next/server";

export const dynamic = "force-dynamic";

/** Liveness for an orchestrator: the server answers. Public (no session), status only. */
export function GET(): NextResponse {
  return NextResponse.json({ ok: true }, { headers: { "cache-control": "no-store" } });
}
