import Link from "next/link";
import type { AppSession } from "@/lib/auth/session";
import type { HealthResponse } from "./health-query";
import { JumpBox } from "./jump-box";
import { LogoMark } from "./logo-mark";
import { MainNav } from "./main-nav";
import { StoreHealthBar } from "./store-health-bar";
import { UserMenu } from "./user-menu";

/** The persistent header: product, navigation, store health, signed-in user. */
export function AppHeader({ session, initialHealth }: { session: AppSession; initialHealth: HealthResponse }) {
  return (
    <header className="sticky top-0 z-30 border-b border-zinc-200 bg-white/95 backdrop-blur dark:border-zinc-800 dark:bg-zinc-950/95">
      <div className="mx-auto flex max-w-screen-2xl flex-wrap items-center gap-x-6 gap-y-2 px-4 py-2">
        {/* Out of the Tab order: "Overview" in the nav is the same link, one stop is enough. */}
        <Link href="/" tabIndex={-1} className="flex items-center gap-2 rounded text-base font-semibold tracking-tight">
          <LogoMark />
          Leasewatch
        </Link>
        <MainNav />
        <div className="ml-auto flex flex-wrap items-center gap-x-4 gap-y-2">
          <JumpBox />
          <StoreHealthBar initialHealth={initialHealth} />
          <span aria-hidden="true" className="hidden h-5 w-px bg-zinc-200 sm:block dark:bg-zinc-800" />
          <UserMenu session={session} />
        </div>
      </div>
    </header>
  );
}
