import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { NOT_AUTHORISED_PATH } from "@/lib/auth/options";
import { toSafeCallbackPath } from "@/lib/auth/callback-url";
import { getAppSession } from "@/lib/auth/session";
import { getAuthEnv } from "@/lib/auth/env";
import { LogoMark } from "@/components/shell/logo-mark";
import { SignInButton } from "./sign-in-button";

export const metadata: Metadata = { title: "Sign in" };

/** next-auth error codes → what the person can do about it. */
const ERROR_MESSAGES: Record<string, string> = {
  AccessDenied: "Your account is not in a Leasewatch group, so it has no access.",
  OAuthSignin: "Could not reach the identity provider. Try again; if it persists, the IdP may be down.",
  OAuthCallback: "The identity provider's answer could not be verified. Please sign in again.",
  OAuthAccountNotLinked: "This account cannot be used here.",
  Callback: "Sign-in failed while finishing. Please try again.",
  SessionRequired: "Please sign in to continue.",
  Configuration: "Sign-in is misconfigured on the server. Ask the console's operators to check its environment.",
};

function firstParam(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Only paths on this console come back from sign-in (no open redirect), and never the sign-in pages or the API. */
function toSafeCallback(value: string | undefined): string {
  const path = toSafeCallbackPath(value, getAuthEnv().nextAuthUrl);
  return path.startsWith("/signin") || path.startsWith("/api/") ? "/" : path;
}

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const callbackUrl = toSafeCallback(firstParam(params.callbackUrl));
  const error = firstParam(params.error);
  const session = await getAppSession();
  if (session) redirect(session.user.roles.length > 0 ? callbackUrl : NOT_AUTHORISED_PATH);

  return (
    <div className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-sm rounded-xl border border-zinc-200 bg-white p-8 shadow-sm dark:border-zinc-800 dark:bg-zinc-900">
        <LogoMark className="mb-4 size-8" />
        <h1 className="text-xl font-semibold tracking-tight">Sign in to Leasewatch</h1>
        <p className="mt-2 text-sm text-zinc-600 dark:text-zinc-400">
          Live leases, their history and contention across your Postgres and Redis lease stores. Access comes from your
          SSO groups.
        </p>
        {error ? (
          <p role="alert" className="mt-4 rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
            {ERROR_MESSAGES[error] ?? "Sign-in failed. Please try again."}
          </p>
        ) : null}
        <div className="mt-6">
          <SignInButton callbackUrl={callbackUrl} />
        </div>
      </div>
    </div>
  );
}
