/** `npm run migrate`, the same as `leasewatch migrate` in this installation: see commands/migrate.ts. */
import { migrateConsole } from "./commands/migrate";

void migrateConsole(process.argv.slice(2)).then((code) => process.exit(code));
