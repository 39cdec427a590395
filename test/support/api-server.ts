/**
 * A real lock API server for tests: real Postgres and Redis stores on a fresh
 * schema / namespace, a token table in a fresh schema, listening on a free port.
 */
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { buildApiServer, type ApiServerOptions } from "@/lib/api/server";
import { API_ACTIONS, TokenStore, type ApiAction, type TNewToken } from "@/lib/api/tokens";
import { freshPgSchema, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import type { LeaseStore } from "@leasewatch/lease";
import { createStoreFixture, type StoreFixture } from "./stores";

export interface ApiFixture {
  url: string;
  pg: StoreFixture;
  redis: StoreFixture;
  tokens: TokenStore;
  handleKey: Buffer;
  /** What Prometheus sends as `Authorization: Bearer …` to scrape /metrics. */
  metricsToken: string;
  storeByName(name: string): LeaseStore;
  /** Another replica on a free port: same tokens and handle key, over `stores` (default: the fixture's). The caller closes it. */
  startReplica(stores?: ReadonlyMap<string, LeaseStore>): Promise<{ url: string; close(): Promise<void> }>;
  createToken(options: { name?: string; prefixes: string[]; stores?: string[]; actions?: ApiAction[]; expiresAt?: Date; ratePerSec?: number; maxConcurrent?: number }): Promise<string>;
  /** fetch with the token, JSON body in and out. */
  call(token: string | null, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }>;
  close(): Promise<void>;
}

/** A lock API server listening on a free port of 127.0.0.1. */
async function listenApiServer(options: ApiServerOptions): Promise<{ app: ReturnType<typeof buildApiServer>; url: string }> {
  const app = buildApiServer(options);
  await app.listen({ port: 0, host: "127.0.0.1" });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

export async function startApiFixture(options: Pick<ApiServerOptions, "trustProxy"> = {}): Promise<ApiFixture> {
  const [pg, redis] = await Promise.all([createStoreFixture("postgres"), createStoreFixture("redis")]);
  const tokenSchema = freshPgSchema(TEST_DATABASE_URL);
  const tokens = new TokenStore({ url: TEST_DATABASE_URL, schema: tokenSchema.schema });
  const stores = new Map<string, LeaseStore>([
    [pg.spec.name, pg.store],
    [redis.spec.name, redis.store],
  ]);
  const handleKey = randomBytes(32);
  const metricsToken = randomBytes(24).toString("hex");
  const { app, url } = await listenApiServer({ stores, tokens, handleKey, metricsToken, logger: false, ...options });
  let counter = 0;
  return {
    url,
    pg,
    redis,
    tokens,
    handleKey,
    metricsToken,
    storeByName(name) {
      const store = stores.get(name);
      if (!store) throw new Error(`no store ${name}`);
      return store;
    },
    async startReplica(replicaStores = stores) {
      const replica = await listenApiServer({ stores: new Map(replicaStores), tokens, handleKey, logger: false });
      return { url: replica.url, close: () => replica.app.close() };
    },
    async createToken(o) {
      const input: TNewToken = {
        name: o.name ?? `t${++counter}-${randomBytes(3).toString("hex")}`,
        prefixes: o.prefixes,
        stores: o.stores ?? [pg.spec.name, redis.spec.name],
        actions: o.actions ?? [...API_ACTIONS],
        expiresAt: o.expiresAt ?? new Date(Date.now() + 3_600_000),
        createdBy: "test",
        ...(o.ratePerSec ? { ratePerSec: o.ratePerSec } : {}),
        ...(o.maxConcurrent ? { maxConcurrent: o.maxConcurrent } : {}),
      };
      return (await tokens.create(input)).token;
    },
    async call(token, method, path, body, headers = {}) {
      const response = await fetch(url + path, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
          ...headers,
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      let parsed: Record<string, unknown> = {};
      try {
        parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        parsed = { raw: text };
      }
      return { status: response.status, body: parsed, headers: response.headers };
    },
    async close() {
      // Graceful close first; a connection still open after a grace period (seen after clients
      // that aborted a waiting acquire) is cut so one test file cannot hang the run.
      const closed = app.close();
      const timer = setTimeout(() => app.server.closeAllConnections(), 3_000);
      await closed;
      clearTimeout(timer);
      await tokens.close();
      await Promise.allSettled([pg.cleanup(), redis.cleanup(), tokenSchema.drop()]);
    },
  };
}
