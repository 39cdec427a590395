/**
 * Cross-site request refusal for the console's writes. A browser sends `Origin`
 * on every POST it makes (same-origin included), so a POST with no Origin did not
 * come from a page of ours: it is refused as well. `Sec-Fetch-Site`, when sent,
 * must agree.
 */

export type OriginCheck = { ok: true } | { ok: false; message: string };

export function checkSameOrigin(headers: Headers, consoleUrl: string): OriginCheck {
  const origin = headers.get("origin");
  if (!origin) return { ok: false, message: "refused: the request has no Origin header (only the console's own pages may do this)" };
  let expected: string;
  try {
    expected = new URL(consoleUrl).origin;
  } catch {
    return { ok: false, message: "refused: the console's own URL is not configured" };
  }
  if (origin !== expected) return { ok: false, message: "refused: cross-origin request (only the console's own pages may do this)" };
  const site = headers.get("sec-fetch-site");
  if (site && site !== "same-origin") return { ok: false, message: "refused: cross-site request (only the console's own pages may do this)" };
  return { ok: true };
}
