/**
 * Every route handler answers 401 without a session, against the production
 * server. The handlers are found by walking app/ for route.ts files and
 * reading the HTTP methods each exports; a handler that is neither in REQUESTS
 * nor in EXEMPT fails the first test, so a new route cannot ship untested.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { PG_STORE } from "./support/harness";

const APP_DIR = path.join(__dirname, "..", "app");
const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

/** Route handlers that must answer without a session, and why. */
const EXEMPT: Record<string, string> = {
  "/api/auth/[...nextauth]": "next-auth's own endpoints (sign-in redirect, OIDC callback, session, sign-out) are how a session starts",
  "/livez": "the liveness probe of a load balancer or orchestrator, which has no session; it answers status only (tested below)",
  "/readyz": "the readiness probe of a load balancer or orchestrator, which has no session; it answers status only, no store or database names (tested below)",
};

interface ApiRequest {
  path: string;
  headers?: Record<string, string>;
  /** With a session, this request succeeds: the 401 above is about the session, not a broken request. */
  isFineWithSession: boolean;
}

/** One or more requests per handler ("METHOD /api/route/as/in/the/tree"). */
const REQUESTS: Record<string, ApiRequest[]> = {
  "GET /api/leases": [{ path: "/api/leases", isFineWithSession: true }],
  "GET /api/past-leases": [{ path: "/api/past-leases?at=2026-01-01T00:00:00Z", isFineWithSession: true }],
  "GET /api/events": [{ path: "/api/events", isFineWithSession: true }],
  "GET /api/overview": [{ path: "/api/overview", isFineWithSession: true }],
  "GET /api/observed": [{ path: "/api/observed", isFineWithSession: true }],
  "GET /api/advice": [{ path: "/api/advice", isFineWithSession: true }],
  "GET /api/slack": [{ path: "/api/slack?window=6h", isFineWithSession: true }],
  "GET /api/health": [{ path: "/api/health", isFineWithSession: true }],
  "GET /api/leases/[store]/[...resource]": [{ path: `/api/leases/${PG_STORE}/e2e-auth:any-resource`, isFineWithSession: true }],
  "GET /api/metrics": [
    { path: "/api/metrics", isFineWithSession: true },
    // A wrong scrape token is refused outright, session or not.
    { path: "/api/metrics", headers: { authorization: "Bearer not-the-metrics-token-0123456789" }, isFineWithSession: false },
  ],
  "GET /api/facets": [{ path: "/api/facets?view=leases&state=expired&window=1h", isFineWithSession: true }],
  "GET /api/owners/[owner]": [{ path: "/api/owners/e2e-auth%40nobody", isFineWithSession: true }],
  "GET /api/jump": [{ path: "/api/jump?q=e2e-auth%3Anothing", isFineWithSession: true }],
  "GET /api/audit": [{ path: "/api/audit", isFineWithSession: true }],
  "GET /api/audit/export": [{ path: "/api/audit/export?format=csv", isFineWithSession: true }],
  // Mutations: without a session, 401 comes before the origin, rate and input checks.
  "POST /api/force-release": [{ path: "/api/force-release", isFineWithSession: false }],
  "GET /api/force-release": [{ path: "/api/force-release", isFineWithSession: false }],
  "POST /api/observed/release": [{ path: "/api/observed/release", isFineWithSession: false }],
  "GET /api/observed/release": [{ path: "/api/observed/release", isFineWithSession: false }],
  "POST /api/force-release/bulk": [{ path: "/api/force-release/bulk", isFineWithSession: false }],
  "GET /api/force-release/bulk": [{ path: "/api/force-release/bulk?prefix=e2e-auth", isFineWithSession: true }],
  "GET /api/tokens": [{ path: "/api/tokens", isFineWithSession: true }],
  "POST /api/tokens": [{ path: "/api/tokens", isFineWithSession: false }],
  "POST /api/tokens/revoke": [{ path: "/api/tokens/revoke", isFineWithSession: false }],
  "GET /api/tokens/revoke": [{ path: "/api/tokens/revoke", isFineWithSession: false }],
};

/** "METHOD /route" for every exported method of every route.ts under app/. */
function listRouteHandlers(dir = APP_DIR): string[] {
  const handlers: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) handlers.push(...listRouteHandlers(full));
    else if (/^route\.(ts|tsx|js)$/.test(entry.name)) {
      const route = `/${path.relative(APP_DIR, dir).split(path.sep).join("/")}`.replace(/(.)\/$/, "$1");
      const source = readFileSync(full, "utf8");
      const exported = new Set<string>();
      for (const m of source.matchAll(/export\s+(?:async\s+)?(?:function|const|let)\s+([A-Z]+)\b/g)) exported.add(m[1]!);
      for (const m of source.matchAll(/export\s*\{([^}]*)\}/g)) {
        for (const part of m[1]!.split(",")) exported.add(part.trim().split(/\s+as\s+/).pop()!);
      }
      const methods = HTTP_METHODS.filter((method) => exported.has(method));
      expect(methods.length, `${route} exports no HTTP method`).toBeGreaterThan(0);
      handlers.push(...methods.map((method) => `${method} ${route}`));
    }
  }
  return handlers.sort();
}

test.describe("signed out", () => {
  test.use({ storageState: { cookies: [], origins: [] } });

  test("every route handler is covered by this spec or exempt with a reason", () => {
    const handlers = listRouteHandlers();
    expect(handlers.length).toBeGreaterThanOrEqual(Object.keys(REQUESTS).length);
    const isExempt = (handler: string) => handler.split(" ")[1]! in EXEMPT;
    expect(handlers.filter((h) => !isExempt(h) && !(h in REQUESTS)), "handlers with no 401 check: add them to REQUESTS").toEqual([]);
    expect(Object.keys(REQUESTS).filter((h) => !handlers.includes(h)), "REQUESTS names handlers that do not exist").toEqual([]);
    expect(Object.keys(EXEMPT).filter((route) => !handlers.some((h) => h.endsWith(` ${route}`))), "EXEMPT names routes that do not exist").toEqual([]);
  });

  test("the probes answer without a session, with their status and nothing else", async ({ request }) => {
    const livez = await request.get("/livez", { maxRedirects: 0 });
    expect(livez.status()).toBe(200);
    expect(await livez.json()).toEqual({ ok: true });
    const readyz = await request.get("/readyz", { maxRedirects: 0 });
    expect(readyz.status()).toBe(200);
    expect(await readyz.json()).toEqual({ ready: true });
    expect(readyz.headers()["cache-control"]).toBe("no-store");
    // Only these two paths: anything beside them still needs a session.
    for (const path of ["/livez/extra", "/readyzz", "/livez.json"]) {
      const response = await request.get(path, { maxRedirects: 0 });
      expect(response.status(), path).toBe(307);
      expect(response.headers().location, path).toContain("/signin");
    }
  });

  for (const [handler, requests] of Object.entries(REQUESTS)) {
    test(`${handler} answers 401 without a session`, async ({ request }) => {
      const method = handler.split(" ")[0]!;
      for (const r of requests) {
        const response = await request.fetch(r.path, { method, headers: r.headers, maxRedirects: 0 });
        const what = `${method} ${r.path}${r.headers ? " with a wrong token" : ""}`;
        expect(response.status(), what).toBe(401);
        expect(response.headers()["content-type"], what).toMatch(/^application\/json/);
        const body = (await response.json()) as { error?: unknown };
        expect(typeof body.error, what).toBe("string");
        expect(JSON.stringify(body), `${what}: no stack trace`).not.toMatch(/\n\s+at\s|node_modules/);
      }
    });
  }
});

test("with a session, the same requests succeed: the 401s are the session's doing", async ({ page }) => {
  for (const [handler, requests] of Object.entries(REQUESTS)) {
    const method = handler.split(" ")[0]!;
    for (const r of requests.filter((x) => x.isFineWithSession)) {
      const response = await page.request.fetch(r.path, { method, headers: r.headers, maxRedirects: 0 });
      expect(response.status(), `${method} ${r.path}`).toBe(200);
    }
  }
});
