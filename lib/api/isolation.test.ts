import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeHandle, encodeHandle } from "./handle";
import { collectEvents } from "@/test/support/stores";
import { startApiFixture, type ApiFixture } from "@/test/support/api-server";

/**
 * Tenant isolation probed from outside: token A attacks tenant B's lease by every
 * route and a few path tricks. Every attempt must be 404 (or 400 for unreadable
 * input) and B's lease must be exactly as it was.
 */
let api: ApiFixture;
let tokenA: string;
let tokenB: string;
const tenantA = `ta${randomUUID().slice(0, 6)}:`;
const tenantB = `tb${randomUUID().slice(0, 6)}:`;

beforeAll(async () => {
  api = await startApiFixture();
  tokenA = await api.createToken({ prefixes: [tenantA] });
  tokenB = await api.createToken({ prefixes: [tenantB], stores: [api.pg.spec.name] });
});
afterAll(async () => {
  await api?.close();
});

describe("tenant isolation", () => {
  for (const kind of ["postgres", "redis"] as const) {
    it(`token A cannot list, read, renew, release, report on or forge B's lease (${kind})`, async () => {
      const storeName = kind === "postgres" ? api.pg.spec.name : api.redis.spec.name;
      const store = api.storeByName(storeName);
      const secretB = `${tenantB}secret:${randomUUID().slice(0, 6)}`;
      const tokenBForStore = kind === "postgres" ? tokenB : await api.createToken({ prefixes: [tenantB], stores: [storeName] });
      const held = await api.call(tokenBForStore, "POST", "/v1/locks/acquire", { store: storeName, resource: secretB, ownerId: "bee-holder", task: "b-job", ttlMs: 60_000 });
      expect(held.body.acquired).toBe(true);
      const handleB = String(held.body.leaseId);
      const before = await store.get(secretB);

      const own = await api.call(tokenA, "POST", "/v1/locks/acquire", { store: storeName, resource: `${tenantA}mine`, ownerId: "a1", task: "a-job", ttlMs: 60_000 });
      const handleA = String(own.body.leaseId);
      const payloadA = decodeHandle(api.handleKey, handleA);
      expect(payloadA?.resource).toBe(`${tenantA}mine`);

      // Handles: A's own body re-pointed at B's resource with A's MAC; one signed with another key; garbage.
      const [, macA] = handleA.split(".");
      const swappedBody = Buffer.from(JSON.stringify([storeName, secretB, payloadA?.leaseId, 60_000, payloadA?.tokenId])).toString("base64url");
      const otherKey = encodeHandle(randomBytes(32), { store: storeName, resource: secretB, leaseId: "x", ttlMs: 1000, tokenId: payloadA?.tokenId ?? "" });
      const guessedMac = createHmac("sha256", "guess").update(swappedBody).digest("base64url");
      const forged = [`${swappedBody}.${macA}`, otherKey, `${swappedBody}.${guessedMac}`, `${swappedBody}.`, "x", handleB.replace(/.$/, (c) => (c === "A" ? "B" : "A"))];

      const probes: Array<[string, string, unknown?]> = [
        ["GET", `/v1/locks?prefix=${encodeURIComponent(tenantB)}&store=${storeName}`],
        ["GET", `/v1/locks?prefix=${encodeURIComponent(tenantB.slice(0, 2))}&store=${storeName}`],
        ["GET", `/v1/locks?prefix=&store=${storeName}`],
        ["GET", `/v1/locks/${encodeURIComponent(secretB)}?store=${storeName}`],
        ["GET", `/v1/locks/${encodeURIComponent(`${tenantA}../${secretB}`)}?store=${storeName}`],
        ["GET", `/v1/locks/${tenantA}..%2F..%2F${encodeURIComponent(secretB)}?store=${storeName}`],
        ["GET", `/v1/locks/..%2F${encodeURIComponent(secretB)}?store=${storeName}`],
        ["GET", `/v1/locks/${encodeURIComponent(tenantA)}%00${encodeURIComponent(secretB)}?store=${storeName}`],
        ["GET", `/v1/locks/${encodeURIComponent(tenantA + "x".repeat(600))}?store=${storeName}`],
        ["POST", `/v1/locks/${handleB}/renew`, {}],
        ["DELETE", `/v1/locks/${handleB}`],
        ["POST", "/v1/locks/acquire", { store: storeName, resource: secretB, ownerId: "a1", task: "steal", ttlMs: 1000 }],
        ["POST", "/v1/locks/acquire", { store: storeName, resource: `${tenantA}\u0000${secretB}`, ownerId: "a1", task: "steal", ttlMs: 1000 }],
        ["POST", "/v1/fencing/rejections", { store: storeName, resource: secretB, fencingToken: "1", seenToken: "2", by: "a" }],
        ...forged.flatMap((h): Array<[string, string, unknown?]> => [
          ["POST", `/v1/locks/${encodeURIComponent(h)}/renew`, {}],
          ["DELETE", `/v1/locks/${encodeURIComponent(h)}`],
        ]),
      ];
      for (const [method, path, body] of probes) {
        const r = await api.call(tokenA, method, path, body);
        expect([400, 404], `${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`).toContain(r.status);
        expect(JSON.stringify(r.body)).not.toContain("b-job");
        expect(JSON.stringify(r.body)).not.toContain("bee-holder");
      }

      // A store B's token may not use is "not found" for B too, like a foreign resource.
      if (kind === "redis") {
        const other = await api.call(tokenB, "GET", `/v1/locks/${encodeURIComponent(secretB)}?store=${storeName}`);
        expect(other.status).toBe(404);
      }

      const after = await store.get(secretB);
      expect(after).toEqual(before);
      const events = await collectEvents(store, { resource: secretB });
      expect(events.map((e) => e.kind)).toEqual(["acquired"]);

      // A's own view shows only A's lease.
      const listA = await api.call(tokenA, "GET", `/v1/locks?store=${storeName}`);
      expect((listA.body.items as Array<{ resource: string }>).map((l) => l.resource)).toEqual([`${tenantA}mine`]);
      // And B still controls its lease.
      expect((await api.call(tokenBForStore, "DELETE", `/v1/locks/${handleB}`)).status).toBe(200);
      expect((await api.call(tokenA, "DELETE", `/v1/locks/${handleA}`)).status).toBe(200);
    });
  }
});
