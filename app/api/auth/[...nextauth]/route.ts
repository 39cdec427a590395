import NextAuth from "next-auth";
import type { NextRequest } from "next/server";
import { NextResponse } from "next/server";
import { getAuthOptions } from "@/lib/auth/options";
import { EnvError } from "@/lib/env";

type RouteContext = { params: Promise<{ nextauth: string[] }> };

/** next-auth's endpoints (sign-in redirect, OIDC callback, session, sign-out), configured from the validated environment. */
async function handleAuth(request: NextRequest, context: RouteContext): Promise<Response> {
  let options;
  try {
    options = getAuthOptions();
  } catch (error) {
    if (error instanceof EnvError) return NextResponse.json({ error: error.message }, { status: 500 });
    throw error;
  }
  return NextAuth(request, context, options) as Promise<Response>;
}

export { handleAuth as GET, handleAuth as POST };
