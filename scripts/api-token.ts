/** `npm run api:token -- create|list|revoke …`, the same as `leasewatch token …` in this installation: see commands/api-token.ts. */
import { runApiToken } from "./commands/api-token";

void runApiToken(process.argv.slice(2), "npm run api:token").then((code) => process.exit(code));
