import { closeProcessAuditLog } from "@/lib/audit/context";
import { closeSessionStore } from "@/lib/auth/session-state";
import { closeConsoleTokenStore } from "@/lib/console/tokens/list-tokens";
import { closeStoreRegistry } from "@/lib/server/store-registry";

/** Every pool and timer the console's server side opened: stores, sessions, audit log, API tokens. */
export async function closeConsolePools(): Promise<void> {
  await Promise.allSettled([closeStoreRegistry(), closeSessionStore(), closeProcessAuditLog(), closeConsoleTokenStore()]);
}
