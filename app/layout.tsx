import type { Metadata, Viewport } from "next";
import "./globals.css";
import { Providers } from "@/components/providers";
import { AppHeader } from "@/components/shell/app-header";
import { ConfigProblem } from "@/components/shell/config-problem";
import { loadShell } from "@/components/shell/load-shell";
import { SkipLink } from "@/components/shell/skip-link";
import { StoreDownBanner } from "@/components/shell/store-down-banner";

export const metadata: Metadata = {
  title: { default: "Leasewatch", template: "%s · Leasewatch" },
  description: "Live state of distributed leases",
};
export const viewport: Viewport = { colorScheme: "light dark" };

/** The layout owns the single <main id="main"> landmark: pages render inside it. */
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
