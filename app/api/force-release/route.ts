import { NextResponse } from "next/server";
import { forceReleaseFromRequest } from "@/lib/actions/force-release";
import { requireApiSession } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

/**
 * Force-releases one lease (body: store, resource, leaseId, reason, confirm).
 * 401 without a session; every other answer is a typed result (see
 * lib/actions/force-release-types.ts) with a status that says which.
 */
export async function POST(request: Request) {
  const answer = await forceReleaseFromRequest(request);
  return NextResponse.json(answer.body, { status: answer.status, headers: { "cache-control": "no-store" } });
}

/** Nothing to read here: 401 without a session (like every API route), else 405. */
export async function GET() {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return NextResponse.json({ error: "use POST to force-release a lease" }, { status: 405, headers: { allow: "POST" } });
}
