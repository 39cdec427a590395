/**
 * The lock API over a Redis store whose connection loses a reply: the store sends the acquire
 * again, and when the lease it granted lapsed meanwhile, a request without an Idempotency-Key
 * is simply not acquired yet and goes on waiting.
 */
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, expect, it } from "vitest";
import { LEASE_LIBRARY } from "@/lib/lease/redis/scripts";
import { RedisLeaseStore } from "@/lib/lease/redis/store";
import type { LeaseStore } from "@/lib/lease/types";
import { startApiFixture, type ApiFixture } from "@/test/support/api-server";
import { collectEvents } from "@/test/support/stores";
import { startTcpProxy, type TcpProxy } from "@/test/support/tcp-proxy";
import { buildApiServer } from "./server";

let api: ApiFixture;
let proxy: TcpProxy;
let proxied: RedisLeaseStore;
let server: FastifyInstance;
let url: string;
let token: string;

beforeAll(async () => {
  api = await startApiFixture();
  const spec = api.redis.spec;
  if (spec.kind !== "redis") throw new Error("expected a redis spec");
  proxy = await startTcpProxy({ port: Number(new URL(spec.url).port) });
  proxied = new RedisLeaseStore({ name: spec.name, url: proxy.url, namespace: spec.namespace });
  await proxied.client.function("LOAD", "REPLACE", LEASE_LIBRARY.code);
  server = buildApiServer({ stores: new Map<string, LeaseStore>([[spec.name, proxied]]), tokens: api.tokens, handleKey: api.handleKey, logger: false });
  await server.listen({ port: 0, host: "127.0.0.1" });
  url = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  token = await api.createToken({ prefixes: ["lost:"], stores: [spec.name] });
});
afterAll(async () => {
  await server?.close();
  await proxied?.close();
  await proxy?.close();
  await api?.close();
});

it("an acquire without a key whose first grant lapsed before the store sent it again keeps waiting and gets a lease", async () => {
  await proxied.get("lost:warm-up"); // connected and idle: the next reply is the acquire's
  const dropped = proxy.dropNextReply({ reconnectDelayMs: 300 });
  const response = await fetch(`${url}/v1/locks/acquire`, {
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
