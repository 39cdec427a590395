/**
 * Security headers for every response (set in proxy.ts). Kept free of server-only
 * imports so the proxy can use it.
 *
 * Scripts: only this origin's files plus inline scripts carrying the per-request
 * nonce (Next.js reads it from the request's CSP header and puts it on its own
 * inline scripts); 'strict-dynamic' lets those load the chunks they need.
 * Styles: this origin's stylesheets and <style> elements carrying the nonce; no
 * other inline <style>. Style *attributes* in the server's HTML (React's style={…},
 * e.g. chart and bar sizes) cannot carry a nonce, so `style-src-attr 'unsafe-inline'`
 * allows those alone; a style attribute can restyle an element but not load or run anything.
 */

export const NONCE_HEADER = "x-nonce";

export function createNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}

export function buildContentSecurityPolicy(options: { nonce: string; isHttps: boolean; isDev: boolean }): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${options.nonce}' 'strict-dynamic'${options.isDev ? " 'unsafe-eval'" : ""}`,
    // The dev server injects <style> elements of its own for hot reload.
    `style-src 'self' ${options.isDev ? "'unsafe-inline'" : `'nonce-${options.nonce}'`}`,
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    ...(options.isHttps ? ["upgrade-insecure-requests"] : []),
  ].join("; ");
}

/** For files that are not documents (scripts, styles, images): they may not frame or run anything. */
export const ASSET_CSP = "default-src 'none'; frame-ancestors 'none'";

/** The headers that do not depend on the request's nonce. HSTS only over https (browsers ignore it on http anyway). */
export function buildStaticSecurityHeaders(isHttps: boolean): Record<string, string> {
  return {
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
    ...(isHttps ? { "strict-transport-security": "max-age=63072000; includeSubDomains" } : {}),
  };
}

/** Served over https: by the URL itself, by the TLS proxy in front (X-Forwarded-Proto), or by configuration. */
export function isHttpsRequest(url: URL, forwardedProto: string | null, consoleUrl: string | undefined): boolean {
  return url.protocol === "https:" || forwardedProto?.split(",")[0]?.trim() === "https" || consoleUrl?.startsWith("https://") === true;
}
