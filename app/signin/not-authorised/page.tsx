import type { Metadata } from "next";
import { SignInButton } from "../sign-in-button";

export const metadata: Metadata = { title: "Not authorised" };

/**
 * Where a user lands when the IdP signed them in but none of their groups maps
 * to a Leasewatch role (at sign-in, or later when the IdP took their group away).
 * Nothing here reveals lease data,
 * nor which IdP groups grant access (that is for the identity administrators to know).
 */
export default function NotAuthorisedPage() {
  return (
    <div className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-md rounded-xl border border-zinc-200 bg-white p-8 shadow-sm dark:border-zinc-800 dark:bg-zinc-900">
        <h1 className="text-xl font-semibold tracking-tight">Not authorised</h1>
        <p className="mt-3 text-sm text-zinc-700 dark:text-zinc-300">
          You signed in, but your account is not in any group that grants access to Leasewatch.
        </p>
        <p className="mt-3 text-sm text-zinc-600 dark:text-zinc-400">
          If you need access, ask your identity administrator to add you to the Leasewatch viewer or operator group.
        </p>
        <div className="mt-6">
          <SignInButton callbackUrl="/" forceLogin label="Sign in as someone else" />
        </div>
      </div>
    </div>
  );
}
