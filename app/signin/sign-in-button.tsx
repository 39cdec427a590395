"use client";
import { signIn } from "next-auth/react";
import { useState } from "react";

/**
 * Starts the OpenID Connect sign-in. `forceLogin` asks the IdP for a fresh login
 * (prompt=login, max_age=0) so someone signed in as the wrong account can switch,
 * and so a re-authentication really makes the user prove who they are.
 */
export function SignInButton({ callbackUrl, forceLogin = false, label = "Sign in with SSO" }: { callbackUrl: string; forceLogin?: boolean; label?: string }) {
  const [isPending, setIsPending] = useState(false);
  return (
    <button
      type="button"
      disabled={isPending}
      onClick={() => {
        setIsPending(true);
        void signIn("oidc", { callbackUrl }, forceLogin ? { prompt: "login", max_age: "0" } : undefined).catch(() => setIsPending(false));
      }}
      className="inline-flex w-full items-center justify-center gap-2 rounded-md bg-zinc-900 px-4 py-2.5 text-sm font-semibold text-white hover:bg-zinc-700 disabled:opacity-60 dark:bg-zinc-100 dark:text-zinc-900 dark:hover:bg-white"
    >
      {isPending ? "Redirecting to your identity provider…" : label}
    </button>
  );
}
