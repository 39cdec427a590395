import { cache } from "react";
import type { HealthResponse } from "@/components/shell/health-query";
import { logServerError } from "@/lib/auth/server-error";
import { getAppSession, type AppSession } from "@/lib/auth/session";
import { EnvError } from "@/lib/auth/env";
import { getStoresHealth } from "@/lib/console/health/health";
import { ConfigError, parseStoresConfig } from "@/lib/server/store-config";

export type Shell =
  | { kind: "signed-in"; session: AppSession; health: HealthResponse }
  | { kind: "anonymous" }
  | { kind: "config-problem"; correlationId: string };

/**
 * Decides what frames the page. The shell (header, nav, store health) is only
 * for signed-in users with a role; pages still check the session themselves.
 * Once per request: pages wait for it before they read (see startPageRead).
 */
export const loadShell = cache(async (): Promise<Shell> => {
  try {
    // Checked before the session so a misconfigured console says so to everyone, signed in or not.
    parseStoresConfig();
    const session = await getAppSession();
    if (!session || session.user.roles.length === 0) return { kind: "anonymous" };
    const { checkedAt, stores } = await getStoresHealth().forShell();
    return { kind: "signed-in", session, health: { checkedAt: checkedAt.toISOString(), stores } };
  } catch (error) {
    // The details are for the server log; the browser gets a reference to find them by.
    if (error instanceof ConfigError || error instanceof EnvError) return { kind: "config-problem", correlationId: logServerError(error, "configuration problem") };
    throw error;
  }
});
