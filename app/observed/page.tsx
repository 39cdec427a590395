import type { Metadata } from "next";
import { ObservedAt } from "@/components/observed/observed-at";
import { ObservedClient } from "@/components/observed/observed-client";
import { ParamProblemNotice, ReadLimitNotice } from "@/components/locks/read-notices";
import type { PageSearchParams } from "@/components/page-read";
import { hasPermission } from "@/lib/auth/roles";
import { requirePermission, requireSession, scopeFor } from "@/lib/auth/session";
import { takeRead } from "@/lib/console/shared/api-response";
import { getObservedView } from "@/lib/console/shared/observed";
import { getObservedAt } from "@/lib/console/shared/observed-history";
import { parseAtParam } from "@/lib/console/shared/params";

export const metadata: Metadata = { title: "Observed locks" };

export default async function ObservedPage({ searchParams }: { searchParams: Promise<PageSearchParams> }) {
  const session = await requireSession();
  requirePermission(session, "leases:read");
  const limited = takeRead(session);
  if (limited) return <ReadLimitNotice retryAfterSeconds={limited.retryAfterSeconds} />;
  const scope = scopeFor(session, "leases:read");
  const at = parseAtParam(await searchParams);
  if (!at.ok) return <ParamProblemNotice problem={at.problem} resetHref="/observed" what="observed locks" />;
  if (at.params.at) return <ObservedAt view={await getObservedAt(at.params.at, { scope })} />;
  const view = await getObservedView({ scope });
  const access = { canRelease: hasPermission(session.user.roles, "observed:release"), canTerminate: hasPermission(session.user.roles, "observed:terminate") };
  return <ObservedClient initialData={view} access={access} />;
}
