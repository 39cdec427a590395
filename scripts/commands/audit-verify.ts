/**
 * Checks the audit log's HMAC chain and lists every entry that was changed, removed or
 * reordered. Exit 0: intact; 1: broken; 2: could not check (configuration, database).
 * Reads LEASEWATCH_AUDIT_URL (or the first Postgres store), LEASEWATCH_AUDIT_SCHEMA and
 * LEASEWATCH_AUDIT_KEY.
 */
import pg from "pg";
import { AuditConfigError, parseAuditConfig } from "../../lib/audit/config";
import { MAX_LISTED_FAILURES, verifyAuditChain } from "../../lib/audit/verify";

export const AUDIT_VERIFY_USAGE = `Usage: leasewatch audit verify     (in the console's installation; also: npm run audit:verify)

Checks the console's audit log: its HMAC chain, listing every entry that was changed,
removed or reordered. Reads LEASEWATCH_AUDIT_URL (or the first Postgres store),
LEASEWATCH_AUDIT_SCHEMA and LEASEWATCH_AUDIT_KEY.
Exit 0 intact, 1 broken, 2 could not check (configuration, database).`;

export async function verifyAuditLog(args: readonly string[]): Promise<number> {
  if (args.length > 0) {
    console.error(`audit verify: unexpected argument "${args[0]}"\n\n${AUDIT_VERIFY_USAGE}`);
    return 2;
  }
  let config;
  try {
    config = parseAuditConfig();
  } catch (error) {
    console.error(error instanceof AuditConfigError ? error.message : String(error));
    return 2;
  }
  const pool = new pg.Pool({ connectionString: config.url, max: 2, connectionTimeoutMillis: 5_000 });
  pool.on("error", () => {});
  try {
    const result = await verifyAuditChain({ pool, schema: config.schema, key: config.key });
    const head = result.head ? `; head #${result.head.id} ${result.head.hash}` : "";
    if (result.ok) {
      console.log(`audit chain intact: ${result.entries} entries in ${config.schema}.audit_log${head}`);
      return 0;
    }
    const entries = result.failureCount === 1 ? "1 entry fails" : `${result.failureCount} entries fail`;
    console.error(`audit chain BROKEN: ${entries} in ${config.schema}.audit_log`);
    for (const failure of result.failures) console.error(`  #${failure.entryId} ${failure.problem}: ${failure.message}`);
    if (result.failures.length === MAX_LISTED_FAILURES) console.error(`  (only the first ${MAX_LISTED_FAILURES} are listed)`);
    console.error(`(${result.verified} of ${result.entries} entries verified${head})`);
    return 1;
  } catch (error) {
    console.error(`could not verify the audit log: ${error instanceof Error ? error.message : String(error)}`);
    return 2;
  } finally {
    await pool.end();
  }
}
