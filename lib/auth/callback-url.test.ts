import { describe, expect, it } from "vitest";
import { toSafeCallbackPath } from "./callback-url";

const CONSOLE = "https://leasewatch.example.com";

describe("toSafeCallbackPath", () => {
  it("keeps paths on this console, with query and hash", () => {
    expect(toSafeCallbackPath("/locks?prefix=tenant_1:billing&window=1h", CONSOLE)).toBe("/locks?prefix=tenant_1:billing&window=1h");
    expect(toSafeCallbackPath("/locks/pg-main/tenant_1/billing#history", CONSOLE)).toBe("/locks/pg-main/tenant_1/billing#history");
    expect(toSafeCallbackPath(`${CONSOLE}/events?kind=expired`, CONSOLE)).toBe("/events?kind=expired");
    // Encoded characters that are harmless stay encoded.
    expect(toSafeCallbackPath("/locks?prefix=a%20b", CONSOLE)).toBe("/locks?prefix=a%20b");
  });

  it.each([
    ["protocol-relative", "//evil.example"],
    ["backslash after slash", "/\\evil.example"],
    ["backslashes only", "\\\\evil.example"],
    ["absolute URL elsewhere", "https://evil.example/"],
    ["same host, other port", "https://leasewatch.example.com:8443/"],
    ["other scheme, same host", "http://leasewatch.example.com/"],
    ["user-info trick", "https://leasewatch.example.com@evil.example/"],
    ["javascript:", "javascript:alert(1)"],
    ["JavaScript: with whitespace", " javascript:alert(1)"],
    ["data:", "data:text/html,<script>alert(1)</script>"],
    ["CRLF encoded", "/%0d%0aSet-Cookie:x=1"],
    ["CRLF raw", "/\r\nLocation: https://evil.example"],
    ["tab between slashes", "/\t/evil.example"],
    ["newline between slashes", "/\n/evil.example"],
    ["NUL", "/\u0000/evil"],
    ["encoded backslash", "/%5Cevil.example"],
    ["dot-segment to //", "/.//evil.example"],
    ["broken percent-encoding", "/%E0%A4%A"],
  ])("refuses %s", (_name, value) => {
    expect(toSafeCallbackPath(value, CONSOLE)).toBe("/");
  });

  it("falls back for empty values and to the given fallback", () => {
    expect(toSafeCallbackPath(undefined, CONSOLE)).toBe("/");
    expect(toSafeCallbackPath("", CONSOLE, "/locks")).toBe("/locks");
    expect(toSafeCallbackPath("//evil", CONSOLE, "/locks")).toBe("/locks");
  });
});
