import { describe, expect, it } from "vitest";
import { TEST_DATABASE_URL, TEST_REDIS_URL } from "@leasewatch/lease/testing";
import { parseStoresConfig } from "@/lib/server/store-config";
import { createStore } from "@/lib/server/store-registry";

/**
 * TLS to the stores follows their URLs. The local test servers speak plain TCP,
 * so a URL that asks for TLS must fail to connect (and the plain one must work):
 * that shows the request for TLS reaches the driver rather than being dropped.
 */
describe("TLS settings in store URLs", () => {
  const withParam = (url: string, param: string) => `${url}${url.includes("?") ? "&" : "?"}${param}`;

  it("accepts sslmode in Postgres URLs and rediss:// for Redis", () => {
    const stores = parseStoresConfig({
      ...process.env,
      LEASEWATCH_STORES: JSON.stringify([
        { name: "pg-tls", kind: "postgres", url: "postgres://u@db.example:5432/leases?sslmode=verify-full&sslrootcert=/etc/ssl/ca.pem" },
        { name: "redis-tls", kind: "redis", url: "rediss://cache.example:6380" },
      ]),
    });
    expect(stores.map((s) => s.url)).toEqual(["postgres://u@db.example:5432/leases?sslmode=verify-full&sslrootcert=/etc/ssl/ca.pem", "rediss://cache.example:6380"]);
  });

  it("Postgres: sslmode=verify-full asks the server for TLS (refused by a plain server); sslmode=disable connects", async () => {
    const tls = createStore({ name: "pg-tls", kind: "postgres", url: withParam(TEST_DATABASE_URL, "sslmode=verify-full") }, { migrate: false });
    const plain = createStore({ name: "pg-plain", kind: "postgres", url: withParam(TEST_DATABASE_URL, "sslmode=disable") }, { migrate: false });
    try {
      const refused = await tls.health();
      expect(refused.ok).toBe(false);
      expect(refused.error).toMatch(/does not support SSL/);
      expect((await plain.health()).ok).toBe(true);
    } finally {
      await tls.close();
      await plain.close();
    }
  });

  it("Redis: rediss:// speaks TLS (a plain server cannot answer it); redis:// connects", async () => {
    const tls = createStore({ name: "redis-tls", kind: "redis", url: TEST_REDIS_URL.replace(/^redis:/, "rediss:") }, { migrate: false });
    const plain = createStore({ name: "redis-plain", kind: "redis", url: TEST_REDIS_URL }, { migrate: false });
    try {
      expect((await tls.health()).ok).toBe(false);
      expect((await plain.health()).ok).toBe(true);
    } finally {
      await tls.close();
      await plain.close();
    }
  });
});
