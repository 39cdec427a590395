/**
 * The stack the browser tests run against (Playwright's webServer command):
 *
 *   - pg-main: the shared PostgreSQL, in a fresh random schema (dropped on exit);
 *   - redis-main: a throwaway redis-server on a free port (so a test can stop it);
 *   - the local IdP on 4410, the workload generator when available, and the
 *     production console on 3100 (built first if missing or stale);
 *   - a loopback control endpoint on 3199 (see ./control.ts): the stores' configs,
 *     stop/start and pause/resume of the Redis store, a wait for the workload's
 *     first events of every kind the specs look for, and a demo user's groups at
 *     the IdP (`POST /idp/users/<user>/groups`, JSON array).
 *
 * Sessions re-read groups from the IdP every 2 s here (LEASEWATCH_GROUPS_REFRESH)
 * and access tokens last 30 s, so the revoked-role and token-refresh paths run within a test.
 *
 * Everything is torn down on SIGTERM/SIGINT (Playwright sends SIGTERM).
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import pg from "pg";
import type { TStoreConfig } from "../../lib/server/store-config";
import { freshPgSchema } from "@leasewatch/lease/testing";
import { startStack, type RunningStack } from "../../scripts/stack";
import { startRedis, stopAllServers, type ThrowawayServer } from "../../test/support/servers";
import { CONSOLE_PORT, CONTROL_PORT, E2E_NEXTAUTH_SECRET, OIDC_PORT, PG_STORE, REDIS_STORE, type StackFacts } from "./harness";
import { openStore, waitForEventKinds, type EventKindsReady } from "./stores";

const log = (line: string) => console.log(line);

/**
 * What the specs look for in both stores: holds that were released (hold times,
 * lease pages with history), holders that crashed (expired), and refusals (contention).
 */
const DATA_KINDS = ["acquired", "released", "expired", "contended"] as const;

async function main(): Promise<void> {
  const schema = freshPgSchema();
  const redis: ThrowawayServer = await startRedis();
  let stack: RunningStack | undefined;
  let control: http.Server | undefined;
  let stopWatching: (() => Promise<void>) | undefined;
  let isStopping = false;
  let dropAuditSchema: (() => Promise<void>) | undefined;

  const shutdown = async (code: number) => {
    if (isStopping) return;
    isStopping = true;
    control?.close();
    await stopWatching?.();
    await stack?.stop().catch((e: unknown) => log(`[e2e] stack stop: ${String(e)}`));
    await stopAllServers().catch(() => {});
    await dropAuditSchema?.().catch((e: unknown) => log(`[e2e] could not drop the audit schema: ${String(e)}`));
    await schema.drop().catch((e: unknown) => log(`[e2e] could not drop schema ${schema.schema}: ${String(e)}`));
    process.exit(code);
  };
  process.on("SIGTERM", () => void shutdown(0));
  process.on("SIGINT", () => void shutdown(0));

  try {
    const stores = [
      { name: PG_STORE, kind: "postgres", url: schema.connectionString, schema: schema.schema },
      { name: REDIS_STORE, kind: "redis", url: redis.url },
    ];
    // The audit log in a schema of this run (runs of other checkouts on the same Postgres never see
    // or lock each other's), not the store's own: both keep their migrations in `schema_migrations`.
    const auditSchema = `${schema.schema}_audit`;
    // The observed history and the demo's ShedLock table live in schemas of the run too (scripts/stack.ts).
    dropAuditSchema = async () => {
      for (const name of [auditSchema, `${schema.schema}_observed`, `${schema.schema}_observed_demo`]) await dropSchema(schema.connectionString, name);
    };
    stack = await startStack({
      port: CONSOLE_PORT,
      oidcPort: OIDC_PORT,
      env: {
        LEASEWATCH_STORES: JSON.stringify(stores),
        // Sessions go into the run's schema, dropped with it.
        LEASEWATCH_CONSOLE_SCHEMA: schema.schema,
        LEASEWATCH_AUDIT_SCHEMA: auditSchema,
        LEASEWATCH_AUDIT_KEY: process.env.LEASEWATCH_AUDIT_KEY || randomBytes(32).toString("base64url"),
        LEASEWATCH_GROUPS_REFRESH: "2",
        NEXTAUTH_SECRET: E2E_NEXTAUTH_SECRET,
      },
      accessTokenTtlS: 30,
      workload: true,
      log,
    });
    const facts: StackFacts = {
      stores: [
        { kind: "postgres", name: PG_STORE, url: schema.connectionString, schema: schema.schema },
        { kind: "redis", name: REDIS_STORE, url: redis.url, namespace: "lw" },
      ],
      audit: { url: schema.connectionString, schema: auditSchema },
    };

    const storeConfigs: TStoreConfig[] = stack.stores;
    // The stack's own connections, for the data wait (not the console's, not the workload's).
    const watched = storeConfigs.map(openStore);
    stopWatching = () => Promise.allSettled(watched.map((store) => store.close())).then(() => undefined);

    const idp = stack.idp;
    control = http.createServer((req, res) => {
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const url = new URL(req.url ?? "/", "http://control");
      // Where the stores and the audit log are, so specs can run real workers against them and check them.
      if (req.method === "GET" && url.pathname === "/facts") return reply(200, facts);
      const groupsRoute = /^\/idp\/users\/([a-z]+)\/groups$/.exec(url.pathname);
      if (req.method === "POST" && groupsRoute) {
        let raw = "";
        req.on("data", (chunk: Buffer) => (raw += chunk.toString()));
        req.on("end", () => {
          let groups: unknown;
          try {
            groups = JSON.parse(raw);
          } catch {
            return reply(400, { error: "body must be a JSON array of group names" });
          }
          if (!Array.isArray(groups) || !groups.every((g) => typeof g === "string")) return reply(400, { error: "body must be a JSON array of group names" });
          const user = groupsRoute[1]!;
          if (!idp.setGroups(user, groups)) return reply(404, { error: `no demo user ${user}` });
          reply(200, { user, groups });
        });
        return;
      }
      if (req.method === "GET" && url.pathname === "/stores") return reply(200, storeConfigs);
      if (req.method === "GET" && url.pathname === "/data-ready") {
        const timeoutMs = Math.min(Number(url.searchParams.get("timeoutMs") ?? 60_000) || 60_000, 120_000);
        waitForEventKinds(watched, DATA_KINDS, timeoutMs).then(
          (ready: EventKindsReady) => reply(ready.isReady ? 200 : 504, ready),
          (e: unknown) => reply(500, { error: String(e) }),
        );
        return;
      }
      const match = /^\/stores\/([a-z0-9_-]+)\/(stop|start|pause|resume)$/.exec(url.pathname);
      if (req.method !== "POST" || !match) {
        return reply(404, { error: "GET /facts, GET /stores, GET /data-ready[?timeoutMs=], POST /idp/users/<user>/groups, POST /stores/<store>/stop|start|pause|resume" });
      }
      if (match[1] !== REDIS_STORE) return reply(404, { error: `only ${REDIS_STORE} can be stopped or paused` });
      const action = match[2]!;
      // SIGSTOP/SIGCONT: the server keeps its connections open and answers nothing (a hang, not a refusal).
      if (action === "pause" || action === "resume") {
        if (action === "pause") redis.pause();
        else redis.resume();
        return reply(200, { store: REDIS_STORE, isRunning: redis.isRunning, isPaused: action === "pause" });
      }
      const done = action === "stop" ? redis.stop() : redis.isRunning ? Promise.resolve() : redis.restart();
      done.then(
        () => reply(200, { store: REDIS_STORE, isRunning: redis.isRunning }),
        (e: unknown) => reply(500, { error: String(e) }),
      );
    });
    await new Promise<void>((resolve) => control!.listen(CONTROL_PORT, "127.0.0.1", resolve));
    log(`[e2e] ready: console ${stack.url}, schema ${schema.schema}, ${REDIS_STORE} at ${redis.url}, control :${CONTROL_PORT}`);
  } catch (error) {
    log(`[e2e] could not start: ${error instanceof Error ? error.message : String(error)}`);
    await shutdown(1);
  }
}

async function dropSchema(connectionString: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  } finally {
    await client.end();
  }
}

void main();
