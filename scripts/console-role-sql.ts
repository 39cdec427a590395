/**
 * Prints the least-privilege console role's SQL (lib/audit/console-role.ts) for
 * your schema names: `npx tsx scripts/console-role-sql.ts --role leasewatch_console
 * --lease-schema leasewatch --audit-schema leasewatch_console`. With no flags it
 * prints ops/console-role.sql.
 */
import { consoleRoleSql } from "../lib/audit/console-role";

function flag(name: string): string[] {
  const values: string[] = [];
  process.argv.forEach((arg, i) => {
    if (arg === name && process.argv[i + 1]) values.push(process.argv[i + 1]!);
  });
  return values;
}

const leaseSchemas = flag("--lease-schema");
process.stdout.write(
  consoleRoleSql({
    ...(flag("--role")[0] ? { role: flag("--role")[0] } : {}),
    ...(leaseSchemas.length ? { leaseSchemas } : {}),
    ...(flag("--audit-schema")[0] ? { auditSchema: flag("--audit-schema")[0] } : {}),
  }),
);
