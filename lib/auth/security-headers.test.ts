import { describe, expect, it } from "vitest";
import { buildContentSecurityPolicy, buildStaticSecurityHeaders, createNonce, isHttpsRequest } from "./security-headers";

describe("security headers", () => {
  it("a CSP that allows only nonce'd inline scripts, no framing, and nothing from elsewhere", () => {
    const csp = buildContentSecurityPolicy({ nonce: "abc123", isHttps: false, isDev: false });
    expect(csp).toContain("script-src 'self' 'nonce-abc123' 'strict-dynamic'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).not.toContain("upgrade-insecure-requests");
    expect(buildContentSecurityPolicy({ nonce: "n", isHttps: true, isDev: false })).toContain("upgrade-insecure-requests");
  });

  it("styles: this origin's files and nonce'd <style> elements; inline style attributes only", () => {
    const csp = buildContentSecurityPolicy({ nonce: "abc123", isHttps: false, isDev: false });
    expect(csp).toContain("style-src 'self' 'nonce-abc123';");
    expect(csp).not.toMatch(/style-src [^;]*unsafe-inline/);
  });

  it("a fresh, unguessable nonce per call", () => {
    const nonces = new Set(Array.from({ length: 100 }, () => createNonce()));
    expect(nonces.size).toBe(100);
    expect(createNonce()).toMatch(/^[A-Za-z0-9+/]{22}==$/);
  });

  it("HSTS only over https", () => {
    expect(buildStaticSecurityHeaders(false)).not.toHaveProperty("strict-transport-security");
    expect(buildStaticSecurityHeaders(true)["strict-transport-security"]).toMatch(/max-age=\d+/);
    expect(buildStaticSecurityHeaders(false)).toMatchObject({ "x-content-type-options": "nosniff", "referrer-policy": "same-origin", "x-frame-options": "DENY" });
    expect(isHttpsRequest(new URL("http://10.0.0.1:3000/"), "https", undefined)).toBe(true);
    expect(isHttpsRequest(new URL("http://127.0.0.1:3000/"), null, "http://127.0.0.1:3000")).toBe(false);
    expect(isHttpsRequest(new URL("http://10.0.0.1:3000/"), null, "https://leasewatch.example.com")).toBe(true);
  });
});
