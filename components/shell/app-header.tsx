import Link from "next/link";
import type { AppSession } from "@/lib/auth/session";
import type { HealthResponse } from "./health-query";
import { MainNav } from "./main-nav";
import { StoreHealthBar } from "./store-health-bar";
import { UserMenu } from "./user-menu";

/** The persistent header: product, navigation, store health, signed-in user. */
export function AppHeader({ session, initialHealth }: { session: AppSession; initialHealth: HealthResponse }) {
  return (
    <header className="sticky top-0 z-30 border-b border-zinc-200 bg-white/95 backdrop-blur dark:border-zinc-800 dark:bg-zinc-950/95">
      <div className="mx-auto flex max-w-screen-2xl flex-wrap items-center gap-x-6 gap-y-2 px-4 py-2">
        <Link href="/" className="flex items-center gap-2 rounded text-base font-semibold tracking-tight">
          <LogoMark />
          Leasewatch
        </Link>
        <MainNav />
        <div className="ml-auto flex flex-wrap items-center gap-x-4 gap-y-2">
          <StoreHealthBar initialHealth={initialHealth} />
          <span aria-hidden="true" className="hidden h-5 w-px bg-zinc-200 sm:block dark:bg-zinc-800" />
          <UserMenu session={session} />
        </div>
      </div>
    </header>
  );
}

function LogoMark() {
  return (
    <svg aria-hidden="true" viewBox="0 0 20 20" className="size-5 text-emerald-600 dark:text-emerald-400">
      <rect x="3" y="8" width="14" height="10" rx="2" fill="currentColor" />
      <path d="M6 8V6a4 4 0 0 1 8 0v2" fill="none" stroke="currentColor" strokeWidth="2" />
      <path d="M10 11v4" stroke="white" strokeWidth="1.8" strokeLinecap="round" />
    </svg>
  );
}
