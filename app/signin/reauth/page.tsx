import type { Metadata } from "next";
import { connection } from "next/server";
import { toSafeCallbackPath } from "@/lib/auth/callback-url";
import { getAuthEnv } from "@/lib/auth/env";
import { LogoMark } from "@/components/shell/logo-mark";
import { SignInButton } from "../sign-in-button";

export const metadata: Metadata = { title: "Confirm it’s you" };

/**
 * Before a force-release: the IdP is asked to authenticate the user again
 * (prompt=login, max_age=0), then the browser comes back to the page it left.
 * Reached through buildReauthUrl() in lib/auth/fresh.ts.
 */
export default async function ReauthPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  await connection();
  const raw = (await searchParams).callbackUrl;
  const path = toSafeCallbackPath(Array.isArray(raw) ? raw[0] : raw, getAuthEnv().nextAuthUrl);
  const callbackUrl = path.startsWith("/signin") || path.startsWith("/api/") ? "/" : path;
  return (
    <div className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-sm rounded-xl border border-zinc-200 bg-white p-8 shadow-sm dark:border-zinc-800 dark:bg-zinc-900">
        <LogoMark className="mb-4 size-8" />
        <h1 className="text-xl font-semibold tracking-tight">Confirm it’s you</h1>
        <p className="mt-2 text-sm text-zinc-600 dark:text-zinc-400">
          Force-releasing a lease needs a recent sign-in. Sign in again with your identity provider; you will come back to
          the page you were on.
        </p>
        <div className="mt-6">
          <SignInButton callbackUrl={callbackUrl} forceLogin label="Sign in again" />
        </div>
      </div>
    </div>
  );
}
