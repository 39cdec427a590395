import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { LeaseDetailClient } from "@/components/locks/lease-detail-client";
import { ParamProblemNotice } from "@/components/locks/read-notices";
import { PastHolder } from "@/components/past/past-holder";
import { ShareLink } from "@/components/past/share-link";
import { TimeScrubber } from "@/components/past/time-scrubber";
import { type PageSearchParams, startPageRead } from "@/components/page-read";
import { describeScope, isResourceInScope } from "@/lib/auth/scope";
import { canSession, scopeFor } from "@/lib/auth/session";
import { getLeaseDetailFromRoute } from "@/lib/console/leases/get-lease-detail";
import { getPastHolder } from "@/lib/console/past/get-past-leases";
import { leaseHref, toSearchString } from "@/lib/console/shared/links";
import { pageReadSignal } from "@/lib/console/shared/page-signal";

export const metadata: Metadata = { title: "Lease" };

type RouteParams = { store: string; resource: string[] };

/** Without a recorded history the scrubber spans the last hour. */
const DEFAULT_SCRUB_MS = 3_600_000;

export default async function LeasePage({ params, searchParams }: { params: Promise<RouteParams>; searchParams: Promise<PageSearchParams> }) {
  const read = await startPageRead("leases:read");
  if (!read.ok) return read.notice;
  const { session, scope } = read;
  const route = await params;
  const search = await searchParams;
  const result = await getLeaseDetailFromRoute(route, { scope, signal: pageReadSignal() });
  if (!result.ok && result.problem.isNotFound) notFound();
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/locks" what="this lease" />;
  const outcome = result.view;
  const resource = outcome.ok ? outcome.data.resource : route.resource.map((s) => safeDecode(s)).join("/");
  const path = leaseHref(outcome.store, resource);
  const past = await getPastHolder(outcome.store, resource, search, { scope });
  if (past && !past.ok) return <ParamProblemNotice problem={past.problem} resetHref={path} what="this lease at that instant" />;
  // Display only: the force-release route re-checks the role with the IdP itself.
  const releaseScope = scopeFor(session, "leases:force_release");
  const access = !canSession(session, "leases:force_release")
    ? ({ canForceRelease: false, reason: "Force release needs the operator role." } as const)
    : isResourceInScope(releaseScope, resource)
      ? ({ canForceRelease: true } as const)
      : ({ canForceRelease: false, reason: `Your operator role covers only ${describeScope(releaseScope)}.` } as const);
  const storeNow = outcome.ok ? outcome.data.storeNow : new Date().toISOString();
  const scrubFrom = (outcome.ok ? outcome.data.timelineFrom : null) ?? new Date(Date.parse(storeNow) - DEFAULT_SCRUB_MS).toISOString();
  const searchString = toSearchString(search);
  return (
    <div className="space-y-4">
      {past ? <PastHolder view={past.view} nowHref={path} /> : null}
      <div className="flex flex-wrap items-center justify-between gap-3">
        <TimeScrubber path={path} search={searchString} from={scrubFrom} to={storeNow} at={past ? past.view.at : null} resource={resource} />
        <ShareLink path={path} search={searchString} />
      </div>
      <LeaseDetailClient store={outcome.store} resource={resource} initialData={outcome} access={access} markAt={past ? past.view.at : null} />
    </div>
  );
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
