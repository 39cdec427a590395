/**
 * Two API replicas over the same stores and tokens, as a load balancer would put them:
 * a keyed acquire retried on the other replica, and lease handles bound to the token
 * that issued them.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectEvents } from "@/test/support/stores";
import { startApiFixture, type ApiFixture } from "@/test/support/api-server";

let api: ApiFixture;
let replicaB: { url: string; close(): Promise<void> };
let token: string;

beforeAll(async () => {
  api = await startApiFixture();
  replicaB = await api.startReplica();
  token = await api.createToken({ prefixes: ["rep:"] });
});
afterAll(async () => {
  await replicaB?.close();
  await api?.close();
});

async function callB(bearer: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(replicaB.url + path, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const res = (name: string) => `rep:${randomUUID().slice(0, 8)}:${name}`;

for (const kind of ["postgres", "redis"] as const) {
  describe(`Idempotency-Key across replicas (${kind})`, () => {
    const store = () => (kind === "postgres" ? api.pg.spec.name : api.redis.spec.name);
    const body = (resource: string) => ({ store: store(), resource, ownerId: "w1", task: "job", ttlMs: 30_000 });

    it("a keyed acquire to A, retried with the same key to B, gets the same lease and records one acquire", async () => {
      const r = res("retry");
      const key = randomUUID();
      const first = await api.call(token, "POST", "/v1/locks/acquire", body(r), { "idempotency-key": key });
      expect(first.status).toBe(200);
      expect(first.body.acquired).toBe(true);
      const retried = await callB(token, "POST", "/v1/locks/acquire", body(r), { "idempotency-key": key });
      expect(retried.status).toBe(200);
      expect(retried.body).toEqual(first.body);
      // And back on A once more, after B answered.
      expect((await api.call(token, "POST", "/v1/locks/acquire", body(r), { "idempotency-key": key })).body).toEqual(first.body);
      expect((await collectEvents(api.storeByName(store()), { resource: r })).map((e) => e.kind)).toEqual(["acquired"]);
      // The handle B gave back works on either replica.
      expect((await callB(token, "DELETE", `/v1/locks/${String(retried.body.leaseId)}`)).body.released).toBe(true);
    });

    it("the same key after its lease ended grants nothing new on any replica, and says why", async () => {
      const r = res("ended");
      const key = randomUUID();
      const first = await api.call(token, "POST", "/v1/locks/acquire", body(r), { "idempotency-key": key });
      expect(first.body.acquired).toBe(true);
      expect((await api.call(token, "DELETE", `/v1/locks/${String(first.body.leaseId)}`)).status).toBe(200);
      const late = await callB(token, "POST", "/v1/locks/acquire", body(r), { "idempotency-key": key });
      expect(late.status).toBe(409);
      expect(String(late.body.detail)).toMatch(/Idempotency-Key.*ended/);
      expect((await collectEvents(api.storeByName(store()), { resource: r })).map((e) => e.kind)).toEqual(["acquired", "released"]);
    });
  });
}

describe("lease handles are bound to the token that issued them", () => {
  it("another token of the same tenant, or of another tenant, gets 404 on renew and release, on either replica; the lease is untouched", async () => {
    const tenant = `bind${randomUUID().slice(0, 6)}:`;
    const issuer = await api.createToken({ prefixes: [tenant] });
    const sameTenant = await api.createToken({ prefixes: [tenant] });
    const otherTenant = await api.createToken({ prefixes: [`other${randomUUID().slice(0, 6)}:`] });
    const r = `${tenant}job`;
    const held = await api.call(issuer, "POST", "/v1/locks/acquire", { store: api.pg.spec.name, resource: r, ownerId: "w1", task: "job", ttlMs: 30_000 });
    expect(held.body.acquired).toBe(true);
    const handle = String(held.body.leaseId);
    const before = await api.pg.store.get(r);

    for (const intruder of [sameTenant, otherTenant]) {
      const renewA = await api.call(intruder, "POST", `/v1/locks/${handle}/renew`, { ttlMs: 60_000 });
      const releaseA = await api.call(intruder, "DELETE", `/v1/locks/${handle}`);
      const releaseB = await callB(intruder, "DELETE", `/v1/locks/${handle}`);
      for (const answer of [renewA, releaseA, releaseB]) {
        expect(answer.status).toBe(404);
        expect(answer.body.type).toBe("https://leasewatch.dev/problems/not-found");
      }
    }
    expect(await api.pg.store.get(r)).toEqual(before);
    // The issuing token still renews and releases it, on either replica.
    expect((await callB(issuer, "POST", `/v1/locks/${handle}/renew`, { ttlMs: 30_000 })).status).toBe(200);
    expect((await api.call(issuer, "DELETE", `/v1/locks/${handle}`)).status).toBe(200);
  });
});
