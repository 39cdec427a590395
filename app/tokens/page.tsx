import type { Metadata } from "next";
import { ReadLimitNotice } from "@/components/locks/read-notices";
import { TokensClient } from "@/components/tokens/tokens-client";
import { canSession, requirePermission, requireSession, scopeFor } from "@/lib/auth/session";
import { takeRead } from "@/lib/console/api-response";
import { listApiTokenViews } from "@/lib/console/api-tokens";
import { getStoreNames } from "@/lib/console/registry";

export const metadata: Metadata = { title: "API tokens" };
export const dynamic = "force-dynamic";

export default async function TokensPage() {
  const session = await requireSession("/tokens");
  requirePermission(session, "tokens:read");
  // Rendering reads the stores: it counts against the user's read rate like the /api reads.
  const limited = takeRead(session);
  if (limited) return <ReadLimitNotice retryAfterSeconds={limited.retryAfterSeconds} />;
  const access = canSession(session, "tokens:manage")
    ? ({ canManage: true } as const)
    : ({ canManage: false, reason: "Creating and revoking API tokens needs the operator role." } as const);
  const listScope = scopeFor(session, "tokens:read");
  const createScope = scopeFor(session, "tokens:manage");
  let tokens: Awaited<ReturnType<typeof listApiTokenViews>>;
  try {
    tokens = await listApiTokenViews(listScope);
  } catch (error) {
    // The console database is down: say so here; the rest of the console still works.
    console.error("[tokens] could not read the API tokens", error instanceof Error ? error.message : error);
    return (
      <div role="alert" className="rounded-lg border border-red-300 bg-red-50 p-4 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
        <p className="font-semibold">The API tokens could not be read.</p>
        <p className="mt-1">The console&apos;s database did not answer. Tokens already issued keep working while the lock API can reach it; try again shortly.</p>
      </div>
    );
  }
  return (
    <TokensClient
      tokens={tokens}
      storeNames={getStoreNames()}
      access={access}
      listScope={listScope.kind === "prefixes" ? [...listScope.prefixes] : null}
      createScope={createScope.kind === "prefixes" && access.canManage ? [...createScope.prefixes] : null}
    />
  );
}
