/**
 * The edge of the console's audited mutation routes. The mutation checks everything itself
 * (rate limit, session, role, origin, input) and answers a typed result with its status; the
 * route only sends it, never cached.
 */
import { NextResponse } from "next/server";
import { requireApiSession } from "@/lib/auth/session";
import type { MutationAnswer } from "@/lib/console/shared/audited-request";

/** A POST handler that sends what `mutate` answers. */
export function mutationHandler(mutate: (request: Request) => Promise<MutationAnswer<unknown>>): (request: Request) => Promise<NextResponse> {
  return async (request) => {
    const answer = await mutate(request);
    return NextResponse.json(answer.body, { status: answer.status, headers: { "cache-control": "no-store" } });
  };
}

/** A GET handler for a route with nothing to read: 401 without a session (like every API route), else 405 saying what to POST (`usage`). */
export function postOnlyHandler(usage: string): () => Promise<NextResponse> {
  return async () => {
    const auth = await requireApiSession();
    if (!auth.ok) return auth.response;
    return NextResponse.json({ error: usage }, { status: 405, headers: { allow: "POST" } });
  };
}
