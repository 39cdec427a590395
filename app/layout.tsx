import type { Metadata, Viewport } from "next";
import "./globals.css";
import { Providers } from "@/components/providers";
import { AppHeader } from "@/components/shell/app-header";
import { ConfigProblem } from "@/components/shell/config-problem";
import type { HealthResponse } from "@/components/shell/health-query";
import { SkipLink } from "@/components/shell/skip-link";
import { StoreDownBanner } from "@/components/shell/store-down-banner";
import { logServerError } from "@/lib/auth/server-error";
import { getAppSession, type AppSession } from "@/lib/auth/session";
import { ConfigError, parseStoresConfig } from "@/lib/server/store-config";
import { getStoresHealth } from "@/lib/console/health/health";
import { EnvError } from "@/lib/auth/env";

export const metadata: Metadata = {
  title: { default: "Leasewatch", template: "%s · Leasewatch" },
  description: "Live state of distributed leases",
};
export const viewport: Viewport = { colorScheme: "light dark" };

type Shell =
  | { kind: "signed-in"; session: AppSession; health: HealthResponse }
  | { kind: "anonymous" }
  | { kind: "config-problem"; correlationId: string };

/**
 * Decides what frames the page. The shell (header, nav, store health) is only
 * for signed-in users with a role; pages still check the session themselves.
 * The layout owns the single <main id="main"> landmark: pages render inside it.
 */
async function loadShell(): Promise<Shell> {
  try {
    // Checked before the session so a misconfigured console says so to everyone, signed in or not.
    parseStoresConfig();
    const session = await getAppSession();
    if (!session || session.user.roles.length === 0) return { kind: "anonymous" };
    const stores = await getStoresHealth();
    return { kind: "signed-in", session, health: { checkedAt: new Date().toISOString(), stores } };
  } catch (error) {
    // The details are for the server log; the browser gets a reference to find them by.
    if (error instanceof ConfigError || error instanceof EnvError) return { kind: "config-problem", correlationId: logServerError(error, "configuration problem") };
    throw error;
  }
}

export default async function RootLayout({ children }: { children: React.ReactNode }) {
  const shell = await loadShell();
  return (
    <html lang="en">
      <body className="min-h-screen bg-zinc-50 text-zinc-900 antialiased dark:bg-zinc-950 dark:text-zinc-100">
        <SkipLink />
        {shell.kind === "config-problem" ? (
          <ConfigProblem correlationId={shell.correlationId} />
        ) : shell.kind === "anonymous" ? (
          <Providers>
            <main id="main" tabIndex={-1} className="outline-none">
              {children}
            </main>
          </Providers>
        ) : (
          <Providers>
            <AppHeader session={shell.session} initialHealth={shell.health} />
            <StoreDownBanner initialHealth={shell.health} />
            <main id="main" tabIndex={-1} className="mx-auto max-w-screen-2xl px-4 py-5 outline-none">
              {children}
            </main>
          </Providers>
        )}
      </body>
    </html>
  );
}
