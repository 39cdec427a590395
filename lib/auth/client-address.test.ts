import { describe, expect, it } from "vitest";
import { findStartupProblems } from "@/lib/startup-checks";
import { parseTrustedProxy, resolveClientAddress, TrustedProxyError } from "./client-address";

describe("TRUSTED_PROXY", () => {
  it("believes X-Forwarded-For hop by hop from the right, only while the hop was added by a listed proxy", () => {
    const trust = parseTrustedProxy({ TRUSTED_PROXY: "10.0.0.0/8, 127.0.0.1" });
    expect(resolveClientAddress("10.1.2.3", "203.0.113.9, 10.0.0.7", trust)).toEqual({ peer: "10.1.2.3", forwardedFor: "203.0.113.9", client: "203.0.113.9" });
    // The client's own first hop is past an untrusted address: not believed.
    expect(resolveClientAddress("10.1.2.3", "198.51.100.1, 203.0.113.9", trust).client).toBe("203.0.113.9");
    expect(resolveClientAddress("192.0.2.50", "203.0.113.9", trust)).toEqual({ peer: "192.0.2.50", forwardedFor: null, client: "192.0.2.50" });
    expect(resolveClientAddress("::ffff:127.0.0.1", "not-an-address", trust)).toEqual({ peer: "127.0.0.1", forwardedFor: null, client: "127.0.0.1" });
    expect(resolveClientAddress("192.0.2.50", "203.0.113.9", parseTrustedProxy({})).client).toBe("192.0.2.50");
  });

  it("refuses a hop count or an unreadable entry with a message that says what to set, at start-up", () => {
    expect(() => parseTrustedProxy({ TRUSTED_PROXY: "1" })).toThrow(TrustedProxyError);
    expect(() => parseTrustedProxy({ TRUSTED_PROXY: "1" })).toThrow(/hop count; list the proxies' addresses/);
    expect(() => parseTrustedProxy({ TRUSTED_PROXY: "10.0.0.0/99" })).toThrow(/addresses or CIDRs/);
    expect(findStartupProblems({ NODE_ENV: "test", TRUSTED_PROXY: "proxy.internal" }).problems.join("\n")).toMatch(/TRUSTED_PROXY must be/);
  });
});
