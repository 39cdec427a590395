import { NextResponse } from "next/server";
import { revokeTokenFromRequest } from "@/lib/actions/api-tokens";
import { requireApiSession } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

/** Revokes a token (body: id). 401 without a session; otherwise a typed result. */
export async function POST(request: Request) {
  const answer = await revokeTokenFromRequest(request);
  return NextResponse.json(answer.body, { status: answer.status, headers: { "cache-control": "no-store" } });
}

/** Nothing to read here: 401 without a session (like every API route), else 405. */
export async function GET() {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return NextResponse.json({ error: "use POST with { id } to revoke a token" }, { status: 405, headers: { allow: "POST" } });
}
