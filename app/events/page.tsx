import type { Metadata } from "next";
import { EventsClient } from "@/components/events/events-client";
import { FacetSummary } from "@/components/facets/facet-summary";
import { ParamProblemNotice, ReadLimitNotice } from "@/components/locks/read-notices";
import { requirePermission, requireSession, scopeFor } from "@/lib/auth/session";
import { takeRead } from "@/lib/console/api-response";
import { toSearchString } from "@/lib/console/links";
import { getEventFacetsFromSearch } from "@/lib/console/facets";
import { listEventsFromSearch } from "@/lib/console/list-events";
import { pageReadSignal } from "@/lib/console/page-signal";

export const metadata: Metadata = { title: "Events" };

type SearchParams = Record<string, string | string[] | undefined>;

export default async function EventsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const session = await requireSession();
  requirePermission(session, "events:read");
  // Rendering reads the stores: it counts against the user's read rate like the /api reads.
  const limited = takeRead(session);
  if (limited) return <ReadLimitNotice retryAfterSeconds={limited.retryAfterSeconds} />;
  const params = await searchParams;
  const scope = scopeFor(session, "events:read");
  const signal = pageReadSignal();
  const [result, facets] = await Promise.all([listEventsFromSearch(params, { scope, signal }), getEventFacetsFromSearch(params, { scope, signal })]);
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/events" what="events" />;
  const search = toSearchString(params);
  const summary = <FacetSummary view="events" search={search} initialData={facets.ok ? facets.view : undefined} />;
  return <EventsClient search={search} initialData={result.view} summary={summary} />;
}
