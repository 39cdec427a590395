import { getToken } from "next-auth/jwt";
import { NextResponse, type NextRequest } from "next/server";

/**
 * Defence in depth only: pages without a session cookie are sent to sign-in
 * before rendering anything. Every page, route handler and server action still
 * checks the session (and role) itself — this proxy is not the security boundary.
 * API routes are not matched: they answer 401 JSON on their own.
 */

const SIGNIN_PATH = "/signin";
// Mirrors REQUEST_PATH_HEADER in lib/auth/session.ts (the proxy stays free of server-only imports).
const REQUEST_PATH_HEADER = "x-leasewatch-path";

export async function proxy(request: NextRequest) {
  const { pathname, search } = request.nextUrl;
  const requestedPath = `${pathname}${search}`;
  const secret = process.env.NEXTAUTH_SECRET;
  // A missing secret is a configuration error the pages explain; treat the visitor as signed out.
  const token = secret ? await getToken({ req: request, secret }).catch(() => null) : null;
  if (!token) {
    const url = new URL(SIGNIN_PATH, request.url);
    url.search = new URLSearchParams({ callbackUrl: requestedPath }).toString();
    return NextResponse.redirect(url);
  }
  const headers = new Headers(request.headers);
  headers.set(REQUEST_PATH_HEADER, requestedPath);
  return NextResponse.next({ request: { headers } });
}

export const config = {
  // Everything except sign-in pages, API routes (they check for themselves), and static assets.
  matcher: ["/((?!api/|signin|_next/static|_next/image|favicon\\.ico|robots\\.txt).*)"],
};
