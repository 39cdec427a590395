/**
 * `npm run api:token -- create --name billing --prefix tenant_1: [--prefix …] [--store pg-main …]
 *   [--action acquire …] [--days 90] [--rate 200] [--concurrency 32]`: creates an API token and prints it once.
 * `npm run api:token -- list` and `npm run api:token -- revoke --name billing`.
 * Defaults: every configured store, every action, 90 days.
 */
import { parseArgs } from "node:util";
import { resolveConsoleDbConfig } from "../lib/auth/session-store";
import { parseStoresConfig } from "../lib/console/config";
import { API_ACTIONS, TokenStore, ZNewToken, type ApiAction } from "../lib/api/tokens";

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: "string" },
      prefix: { type: "string", multiple: true },
      store: { type: "string", multiple: true },
      action: { type: "string", multiple: true },
      days: { type: "string", default: "90" },
      rate: { type: "string" },
      concurrency: { type: "string" },
    },
  });
  const db = resolveConsoleDbConfig();
  const tokens = new TokenStore({ url: db.url, schema: db.schema });
  try {
    if (command === "create") {
      const input = ZNewToken.safeParse({
        name: values.name,
        prefixes: values.prefix ?? [],
        stores: values.store ?? parseStoresConfig().map((s) => s.name),
        actions: (values.action ?? [...API_ACTIONS]) as ApiAction[],
        expiresAt: new Date(Date.now() + Number(values.days) * 86_400_000),
        ...(values.rate ? { ratePerSec: Number(values.rate) } : {}),
        ...(values.concurrency ? { maxConcurrent: Number(values.concurrency) } : {}),
        createdBy: `cli:${process.env.USER ?? "unknown"}`,
      });
      if (!input.success) throw new Error(input.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
      const { token, record } = await tokens.create(input.data);
      console.error(`created token "${record.name}" for ${record.prefixes.join(", ")} on ${record.stores.join(", ")}, expires ${record.expiresAt.toISOString()}; it is shown once:`);
      console.log(token);
    } else if (command === "list") {
      for (const t of await tokens.list()) {
        const state = t.revokedAt ? "revoked" : t.expiresAt.getTime() <= Date.now() ? "expired" : "live";
        console.log(`${t.name}\t${state}\t${t.prefixes.join(",")}\t${t.stores.join(",")}\t${t.actions.join(",")}\texpires ${t.expiresAt.toISOString()}`);
      }
    } else if (command === "revoke") {
      if (!values.name) throw new Error("revoke needs --name");
      const { revoked } = await tokens.revoke(values.name);
      console.log(revoked ? `revoked "${values.name}"` : `no live token named "${values.name}"`);
    } else {
      throw new Error("usage: api:token -- create --name N --prefix P [--store S] [--action A] [--days D] | list | revoke --name N");
    }
  } finally {
    await tokens.close();
  }
}

main().catch((error: unknown) => {
  console.error(`[api:token] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
