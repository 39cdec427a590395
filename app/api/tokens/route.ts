import { NextResponse } from "next/server";
import { createTokenFromRequest } from "@/lib/actions/api-tokens";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/api-response";
import { listApiTokenViews } from "@/lib/console/api-tokens";

export const dynamic = "force-dynamic";

/** The lock API's tokens this session may see (never a secret or a hash), newest first. */
export async function GET() {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return respondWithRead(auth.session, "tokens:read", async (scope) => ({ ok: true, view: { items: await listApiTokenViews(scope) } }));
}

/**
 * Creates a token (body: name, prefixes, stores, actions, expiresInDays). The
 * secret is in this answer only. 401 without a session; every other answer is a
 * typed result (lib/actions/api-token-types.ts) with a status that says which.
 */
export async function POST(request: Request) {
  const answer = await createTokenFromRequest(request);
  return NextResponse.json(answer.body, { status: answer.status, headers: { "cache-control": "no-store" } });
}
