/**
 * The lock API over a Redis store whose connection loses a reply: the store sends the acquire
 * again, and when the lease it granted lapsed meanwhile, a request without an Idempotency-Key
 * is simply not acquired yet and goes on waiting.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { LEASE_LIBRARY } from "@leasewatch/lease/internal";
import { type LeaseStore, RedisLeaseStore } from "@leasewatch/lease";
import { startApiFixture, type ApiFixture } from "@/test/support/api-server";
import { collectEvents } from "@/test/support/stores";
import { startTcpProxy, type TcpProxy } from "@/test/support/tcp-proxy";

let api: ApiFixture;
let proxy: TcpProxy;
let proxied: RedisLeaseStore;
let replica: { url: string; close(): Promise<void> };
let token: string;

beforeAll(async () => {
  api = await startApiFixture();
  const spec = api.redis.spec;
  if (spec.kind !== "redis") throw new Error("expected a redis spec");
  proxy = await startTcpProxy({ port: Number(new URL(spec.url).port) });
  proxied = new RedisLeaseStore({ name: spec.name, url: proxy.url, namespace: spec.namespace });
  await proxied.client.function("LOAD", "REPLACE", LEASE_LIBRARY.code);
  replica = await api.startReplica(new Map<string, LeaseStore>([[spec.name, proxied]]));
  token = await api.createToken({ prefixes: ["lost:"], stores: [spec.name] });
});
afterAll(async () => {
  await replica?.close();
  await proxied?.close();
  await proxy?.close();
  await api?.close();
});

it("an acquire without a key whose first grant lapsed before the store sent it again keeps waiting and gets a lease", async () => {
  await proxied.get("lost:warm-up"); // connected and idle: the next reply is the acquire's
  const dropped = proxy.dropNextReply({ reconnectDelayMs: 300 });
  const response = await fetch(`${replica.url}/v1/locks/acquire`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ store: api.redis.spec.name, resource: "lost:lapsed", ownerId: "w1", task: "job", ttlMs: 100, waitMs: 5_000 }),
  });
  await dropped;
  const body = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(body)).toBe(200);
  expect(body.acquired).toBe(true);
  const kinds = (await collectEvents(api.redis.store, { resource: "lost:lapsed" })).map((e) => e.kind).reverse();
  expect(kinds.slice(0, 3)).toEqual(["acquired", "released", "acquired"]);
});
