/**
 * The stack the browser tests run against (Playwright's webServer command):
 *
 *   - pg-main: the shared PostgreSQL, in a fresh random schema (dropped on exit);
 *   - redis-main: a throwaway redis-server on a free port (so a test can stop it);
 *   - the local IdP on 4410, the workload generator when available, and the
 *     production console on 3100 (built first if missing or stale);
 *   - a loopback control endpoint on 3199 to stop/start the Redis store and to
 *     change a demo user's groups at the IdP (`POST /idp/users/<user>/groups`, JSON array).
 *
 * Sessions re-read groups from the IdP every 2 s here (LEASEWATCH_GROUPS_REFRESH)
 * and access tokens last 30 s, so the revoked-role and token-refresh paths run within a test.
 *
 * Everything is torn down on SIGTERM/SIGINT (Playwright sends SIGTERM).
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import pg from "pg";
import { freshPgSchema } from "../../lib/lease/testing/isolation";
import { startStack, type RunningStack } from "../../scripts/stack";
import { startRedis, stopAllServers, type ThrowawayServer } from "../../test/support/servers";
import { CONSOLE_PORT, CONTROL_PORT, E2E_NEXTAUTH_SECRET, OIDC_PORT, PG_STORE, REDIS_STORE, type StackFacts } from "./harness";

const log = (line: string) => console.log(line);

async function main(): Promise<void> {
  const schema = freshPgSchema();
  const redis: ThrowawayServer = await startRedis();
  let stack: RunningStack | undefined;
  let control: http.Server | undefined;
  let isStopping = false;
  let dropAuditSchema: (() => Promise<void>) | undefined;

  const shutdown = async (code: number) => {
    if (isStopping) return;
    isStopping = true;
    control?.close();
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
    dropAuditSchema = () => dropSchema(schema.connectionString, auditSchema);
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

    const idp = stack.idp;
    control = http.createServer((req, res) => {
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      // Where the stores and the audit log are, so specs can run real workers against them and check them.
      if (req.method === "GET" && req.url === "/facts") return reply(200, facts);
      const groupsRoute = /^\/idp\/users\/([a-z]+)\/groups$/.exec(req.url ?? "");
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
      const match = /^\/stores\/([a-z0-9_-]+)\/(stop|start)$/.exec(req.url ?? "");
      if (req.method !== "POST" || !match) return reply(404, { error: "POST /stores/<store>/stop|start" });
      if (match[1] !== REDIS_STORE) return reply(404, { error: `only ${REDIS_STORE} can be stopped` });
      const action = match[2] === "stop" ? redis.stop() : redis.isRunning ? Promise.resolve() : redis.restart();
      action.then(
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
