import { describe, expect, it } from "vitest";
import { leaseApiHref, leaseHref } from "./links";
import { parseLeaseDetailParams } from "./params";

const NASTY_NAMES = [
  "..",
  ".",
  "...",
  "a/../b",
  "a/./b",
  "tenant_1:a/../../audit",
  "tenant_1:x/..",
  "%2e%2e",
  "%2E.",
  ".%2e/x",
  "a/%2e%2e/b",
  "~..",
  "~.",
  "a/~~../b",
  "a/",
  "/a",
  "a//b",
  "//",
  "a/../",
  "tenant_1:café/日本/../x",
  "%",
  "%25",
  ".a/b.",
];

/** What a browser does with the link (WHATWG URL: dot segments, `%2e` included, are resolved), then what the page reads. */
function openAsBrowser(href: string, mount: string) {
  const url = new URL(href, "https://console.test/somewhere/deep/");
  expect(url.pathname.startsWith(`${mount}/`)).toBe(true);
  const [store = "", ...resource] = url.pathname.slice(mount.length + 1).split("/");
  return parseLeaseDetailParams({ store, resource });
}

describe("lease links open the resource they name", () => {
  it.each(NASTY_NAMES)("%j survives the browser and the page's decoding", (resource) => {
    const page = openAsBrowser(leaseHref("pg-main", resource), "/locks");
    expect(page).toEqual({ ok: true, params: { store: "pg-main", resource } });
    const api = openAsBrowser(leaseApiHref("redis-main", resource), "/api/leases");
    expect(api).toEqual({ ok: true, params: { store: "redis-main", resource } });
  });

  it("ordinary names keep their readable path", () => {
    expect(leaseHref("pg-main", "tenant_1:reports/2026-04")).toBe("/locks/pg-main/tenant_1%3Areports/2026-04");
  });
});
