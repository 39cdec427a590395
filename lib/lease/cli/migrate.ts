import { PostgresLeaseStore } from "../postgres/store";
import { resolveStoreSpec, runOnStore, STORE_OPTIONS, STORE_OPTIONS_HELP } from "./store-option";
import { EXIT, parseOptions, UsageError, type CliOutput } from "./usage";

export const MIGRATE_HELP = `Usage: leasewatch migrate --store URL [--status]

Creates or upgrades a Postgres store's schema (versioned and idempotent: safe to run
again, and from several places at once). Run it once as a role that may create the
schema; workers then need no such right. A Redis store has nothing to migrate (its
functions are loaded on first use): the command only checks that it answers.

Inside the console's installation, \`leasewatch migrate\` without --store migrates what
the console uses: every Postgres store it is configured with and its audit log schema
(as \`npm run migrate\` does).

Options:
  --status      print the schema's version and the migrations still to apply; change nothing
  -h, --help    this help

${STORE_OPTIONS_HELP}

Exit status: 0 done (--status: nothing pending); 1 --status: migrations pending; 2 usage
error; 69 the store could not be reached or refused.`;

export async function runMigrate(argv: readonly string[], output: CliOutput): Promise<number> {
  const { values, positionals } = parseOptions(argv, { ...STORE_OPTIONS, status: { type: "boolean" } }, true);
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const spec = await resolveStoreSpec(values);
  return runOnStore(spec, output, { showWarnings: true }, async (store) => {
    if (store instanceof PostgresLeaseStore && values.status) {
      const { version, pending } = await store.migrationStatus();
      const todo = pending.map((m) => `${m.version} (${m.name})`).join(", ");
      output.out(`${spec.name}: schema ${store.schema} at version ${version}${pending.length ? `, pending ${todo}` : " (up to date)"}`);
      return pending.length ? EXIT.FAILURE : EXIT.OK;
    }
    if (store instanceof PostgresLeaseStore) {
      const { applied, version } = await store.migrate();
      output.out(`${spec.name}: schema ${store.schema} at version ${version}${applied.length ? ` (applied ${applied.join(", ")})` : " (up to date)"}`);
    } else {
      const health = await store.health();
      if (!health.ok) throw new Error(health.error ?? "not reachable");
      output.out(`${spec.name}: nothing to migrate on Redis (the store's functions load on first use); it answers`);
    }
    return EXIT.OK;
  });
}
