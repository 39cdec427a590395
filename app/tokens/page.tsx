import type { Metadata } from "next";
import { TokensClient } from "@/components/tokens/tokens-client";
import { startPageRead } from "@/components/page-read";
import { canSession, scopeFor } from "@/lib/auth/session";
import { listApiTokenViews } from "@/lib/console/tokens/list-tokens";
import { getStoreNames } from "@/lib/server/store-registry";
import { getLogger } from "@/lib/log/logger";

export const metadata: Metadata = { title: "API tokens" };
export const dynamic = "force-dynamic";

export default async function TokensPage() {
  const read = await startPageRead("tokens:read", "/tokens");
  if (!read.ok) return read.notice;
  const { session, scope: listScope } = read;
  const access = canSession(session, "tokens:manage")
    ? ({ canManage: true } as const)
    : ({ canManage: false, reason: "Creating and revoking API tokens needs the operator role." } as const);
  const createScope = scopeFor(session, "tokens:manage");
  let tokens: Awaited<ReturnType<typeof listApiTokenViews>>;
  try {
    tokens = await listApiTokenViews(listScope);
  } catch (error) {
    // The console database is down: say so here; the rest of the console still works.
    getLogger("tokens").error({ err: error }, "could not read the API tokens");
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
