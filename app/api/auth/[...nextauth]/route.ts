import NextAuth from "next-auth";
import type { NextRequest } from "next/server";
import { respondWithServerError } from "@/lib/auth/server-error";
import { getAuthOptions } from "@/lib/auth/options";
import { EnvError } from "@/lib/auth/env";

type RouteContext = { params: Promise<{ nextauth: string[] }> };

/** next-auth's endpoints (sign-in redirect, OIDC callback, session, sign-out), configured from the validated environment. */
async function handleAuth(request: NextRequest, context: RouteContext): Promise<Response> {
  let options;
  try {
    options = getAuthOptions();
  } catch (error) {
    if (error instanceof EnvError) return respondWithServerError(error, "sign-in is misconfigured; see the server log");
    throw error;
  }
  return NextAuth(request, context, options) as Promise<Response>;
}

export { handleAuth as GET, handleAuth as POST };
