import { getToken } from "next-auth/jwt";
import { NextResponse, type NextRequest } from "next/server";
import { isLeasePageOutOfScope } from "@/lib/console/leases/lease-page-scope";
import {
  ASSET_CSP,
  buildContentSecurityPolicy,
  buildStaticSecurityHeaders,
  createNonce,
  isHttpsRequest,
  NONCE_HEADER,
} from "@/lib/auth/security-headers";

/**
 * Runs before every request:
 *
 *   - security headers on every response (pages, API routes, assets), with a fresh
 *     CSP nonce per page request (lib/auth/security-headers.ts);
 *   - defence in depth only: pages without a session cookie are sent to sign-in
 *     before rendering anything. Every page, route handler and server action still
 *     checks the session (and role) itself — this proxy is not the security boundary.
 *     API routes answer 401 JSON on their own;
 *   - a lease page for a resource outside the signed-in viewer's scope answers 404
 *     before it starts streaming (lib/console/leases/lease-page-scope.ts).
 */

const SIGNIN_PATH = "/signin";
// Mirrors REQUEST_PATH_HEADER in lib/auth/session.ts (the proxy stays free of server-only imports).
const REQUEST_PATH_HEADER = "x-leasewatch-path";
const ASSET_PATH = /^\/(_next\/static|_next\/image|favicon\.ico|robots\.txt)/;
// API routes answer 401 themselves; /livez and /readyz are public probes (status only).
const NO_SIGN_IN_NEEDED = /^\/(api\/|signin(\/|$)|livez$|readyz$)/;
/** A path no route matches, so rendering it is Next.js's own 404. */
const NOT_FOUND_PATH = "/_leasewatch/not-found";

function withHeaders(response: NextResponse, headers: Record<string, string>): NextResponse {
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

export async function proxy(request: NextRequest) {
  const { pathname, search } = request.nextUrl;
  const isHttps = isHttpsRequest(request.nextUrl, request.headers.get("x-forwarded-proto"), process.env.NEXTAUTH_URL);
  const headers = buildStaticSecurityHeaders(isHttps);

  if (ASSET_PATH.test(pathname)) return withHeaders(NextResponse.next(), { ...headers, "content-security-policy": ASSET_CSP });

  const nonce = createNonce();
  const csp = buildContentSecurityPolicy({ nonce, isHttps, isDev: process.env.NODE_ENV === "development" });
  const responseHeaders = { ...headers, "content-security-policy": csp };
  const requestHeaders = new Headers(request.headers);
  // Next.js takes the nonce for its own inline scripts from the request's CSP header.
  requestHeaders.set("content-security-policy", csp);
  requestHeaders.set(NONCE_HEADER, nonce);
  const requestedPath = `${pathname}${search}`;
  requestHeaders.set(REQUEST_PATH_HEADER, requestedPath);

  if (!NO_SIGN_IN_NEEDED.test(pathname)) {
    const secret = process.env.NEXTAUTH_SECRET;
    // A missing secret is a configuration error the pages explain; treat the visitor as signed out.
    const token = secret ? await getToken({ req: request, secret }).catch(() => null) : null;
    if (!token) {
      const url = new URL(SIGNIN_PATH, request.url);
      url.search = new URLSearchParams({ callbackUrl: requestedPath }).toString();
      return withHeaders(NextResponse.redirect(url), responseHeaders);
    }
    // A lease page outside the viewer's scope is a real 404: the page streams behind its
    // loading skeleton, so by the time it could say so its status is already 200. No route
    // matches the rewritten path, so Next.js answers its not-found page with a 404, exactly
    // as for a mistyped address. The page still checks the scope itself.
    if (await isLeasePageOutOfScope(pathname, token).catch(() => false)) {
      return withHeaders(NextResponse.rewrite(new URL(NOT_FOUND_PATH, request.url), { request: { headers: requestHeaders } }), responseHeaders);
    }
  }
  return withHeaders(NextResponse.next({ request: { headers: requestHeaders } }), responseHeaders);
}

export const config = {
  // Every request: the headers go on all of them.
  matcher: ["/:path*"],
};
