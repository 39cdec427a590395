import { describe, expect, it } from "vitest";
import { checkSameOrigin } from "./same-origin";

const CONSOLE = "https://console.example.com/";
const check = (h: Record<string, string>) => checkSameOrigin(new Headers(h), CONSOLE);

describe("checkSameOrigin", () => {
  it("accepts the console's own origin", () => {
    expect(check({ origin: "https://console.example.com" })).toEqual({ ok: true });
    expect(check({ origin: "https://console.example.com", "sec-fetch-site": "same-origin" })).toEqual({ ok: true });
  });

  it.each([
    ["no Origin", {}],
    ["another site", { origin: "https://evil.example" }],
    ["a look-alike", { origin: "https://console.example.com.evil.example" }],
    ["another scheme", { origin: "http://console.example.com" }],
    ["another port", { origin: "https://console.example.com:8443" }],
    ["the opaque null origin", { origin: "null" }],
    ["a cross-site fetch with a forged Origin", { origin: "https://console.example.com", "sec-fetch-site": "cross-site" }],
  ])("refuses %s", (_what, headers: Record<string, string>) => {
    expect(check(headers).ok).toBe(false);
  });
});
