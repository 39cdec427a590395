/**
 * The edge of the console's read routes: permission check, then the read, then
 * its outcome as HTTP — 200 with the view, 400 with `{ error, param }` for a bad
 * URL parameter, 403 without the permission, 500 with a correlation id for a bad
 * stores configuration (the details go to the server log). Store outages are not errors here: they are part of the
 * view (`{ store, ok: false, error }`), so the rest still renders.
 */
import { NextResponse } from "next/server";
import { respondWithServerError } from "@/lib/auth/server-error";
import { requirePermission, toPermissionResponse, type AppSession } from "@/lib/auth/session";
import type { Permission } from "@/lib/auth/roles";
import { ConfigError } from "./config";
import type { ReadResult } from "./views";

export async function respondWithRead<T>(session: AppSession, permission: Permission, read: () => Promise<ReadResult<T>>): Promise<NextResponse> {
  try {
    requirePermission(session, permission);
    const result = await read();
    if (!result.ok) {
      const { param, message } = result.problem;
      return NextResponse.json({ error: `Bad parameter "${param}": ${message}`, param }, { status: 400 });
    }
    return NextResponse.json(result.view, { headers: { "cache-control": "no-store" } });
  } catch (error) {
    const forbidden = toPermissionResponse(error);
    if (forbidden) return forbidden;
    if (error instanceof ConfigError) return respondWithServerError(error, "the console is misconfigured; see the server log");
    throw error;
  }
}
