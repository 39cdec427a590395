/**
 * Who may read `/api/metrics`: a signed-in user with `metrics:read` (like every
 * route), or a scraper presenting `Authorization: Bearer <METRICS_TOKEN>`.
 * Prometheus cannot hold an SSO session, so the token is the scraping path; with
 * METRICS_TOKEN unset only sessions are accepted. A wrong token is refused
 * outright rather than falling back to the session.
 */
import { timingSafeEqual } from "node:crypto";
import { NextResponse } from "next/server";
import { z } from "zod";
import { requireApiSession, requirePermission, toPermissionResponse } from "@/lib/auth/session";

/** Long enough not to be guessed; printable, no spaces (it travels in a header). */
const ZMetricsToken = z.string().regex(/^[\x21-\x7e]{24,256}$/);

export class MetricsTokenError extends Error {
  constructor() {
    super("METRICS_TOKEN must be 24-256 printable characters without spaces (e.g. `openssl rand -hex 24`)");
    this.name = "MetricsTokenError";
  }
}

/** The configured token, or null when unset. Throws MetricsTokenError when set but unusable. */
export function readMetricsToken(env: Record<string, string | undefined> = process.env): string | null {
  const raw = env.METRICS_TOKEN;
  if (raw === undefined || raw === "") return null;
  const parsed = ZMetricsToken.safeParse(raw);
  if (!parsed.success) throw new MetricsTokenError();
  return parsed.data;
}

function isSameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export type MetricsAccess = { ok: true; via: "token" | "session" } | { ok: false; response: NextResponse };

export async function requireMetricsAccess(request: Request, env: Record<string, string | undefined> = process.env): Promise<MetricsAccess> {
  const bearer = /^bearer(?:\s+(.*))?$/i.exec(request.headers.get("authorization") ?? "");
  if (bearer) {
    let expected: string | null;
    try {
      expected = readMetricsToken(env);
    } catch (error) {
      return { ok: false, response: NextResponse.json({ error: (error as Error).message }, { status: 500 }) };
    }
    if (expected !== null && isSameToken((bearer[1] ?? "").trim(), expected)) return { ok: true, via: "token" };
    return {
      ok: false,
      response: NextResponse.json({ error: "invalid metrics token" }, { status: 401, headers: { "www-authenticate": "Bearer" } }),
    };
  }
  const auth = await requireApiSession();
  if (!auth.ok) return auth;
  try {
    requirePermission(auth.session, "metrics:read");
  } catch (error) {
    const forbidden = toPermissionResponse(error);
    if (forbidden) return { ok: false, response: forbidden };
    throw error;
  }
  return { ok: true, via: "session" };
}
