import { randomUUID } from "node:crypto";
import { parseApiConfig } from "@/lib/api/config";
import { startApiServer, type RunningApi } from "@/lib/api/start";
import { DEFAULT_MAX_CONCURRENT, DEFAULT_RATE_PER_SEC } from "@/lib/api/tokens";
import { createTokenAudited } from "@/lib/audit/api-tokens";
import { parseAuditConfig } from "@/lib/audit/config";
import { AuditLog } from "@/lib/audit/log";
import type { TStoreConfig } from "@/lib/server/store-config";
import { loggerOptions } from "@/lib/log/logger";

/**
 * The lock API, with a token for `demo:` valid for a day; a new one each run (a token is shown once).
 * Created like every other token: with its audit entry in the same transaction, in the console's
 * audit log, by the actor `demo`, so /audit shows where the printed token came from.
 */
export async function startDemoApi(options: {
  port: number;
  /** The demo's environment, with the console's audit key: the same stores, console schema and audit log. */
  env: NodeJS.ProcessEnv;
  stores: readonly TStoreConfig[];
}): Promise<{ api: RunningApi; token: string }> {
  const { port, env, stores } = options;
  const config = parseApiConfig(env);
  const auditConfig = parseAuditConfig(env, stores);
  const audit = new AuditLog({ connectionString: auditConfig.url, schema: auditConfig.schema, key: auditConfig.key });
  const api = await startApiServer({ ...config, port }, { logger: loggerOptions("api", "warn") });
  try {
    await audit.migrate();
    const outcome = await createTokenAudited(
      {
        actor: { id: "demo", email: null, roles: [] },
        request: { requestId: randomUUID(), ip: null, userAgent: "npm run demo" },
        token: {
          name: `demo-${Date.now().toString(36)}`,
          prefixes: ["demo:"],
          stores: stores.map((s) => s.name),
          actions: ["acquire", "renew", "release", "read", "report"],
          expiresAt: new Date(Date.now() + 86_400_000),
          ratePerSec: DEFAULT_RATE_PER_SEC,
          maxConcurrent: DEFAULT_MAX_CONCURRENT,
        },
      },
      { getAuditLog: async () => audit, tokenDb: config.tokenDb },
    );
    if (outcome.outcome !== "created") throw new Error(`could not create the demo's API token: ${"message" in outcome ? outcome.message : outcome.outcome}`);
    return { api, token: outcome.token };
  } catch (error) {
    await api.close();
    throw error;
  } finally {
    await audit.close();
  }
}
