/** `npm run audit:verify`, the same as `leasewatch audit verify` in this installation: see commands/audit-verify.ts. */
import { verifyAuditLog } from "./commands/audit-verify";

void verifyAuditLog(process.argv.slice(2)).then((code) => process.exit(code));
