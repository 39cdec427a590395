import type { Metadata } from "next";
import { EventsClient } from "@/components/events/events-client";
import { FacetSummary } from "@/components/facets/facet-summary";
import { ParamProblemNotice } from "@/components/locks/read-notices";
import { type PageSearchParams, startSearchPageRead } from "@/components/page-read";
import { getEventFacetsFromSearch } from "@/lib/console/facets/facets";
import { listEventsFromSearch } from "@/lib/console/events/list-events";

export const metadata: Metadata = { title: "Events" };

export default async function EventsPage({ searchParams }: { searchParams: Promise<PageSearchParams> }) {
  const read = await startSearchPageRead("events:read", searchParams);
  if (!read.ok) return read.notice;
  const { scope, params, search, signal } = read;
  const [result, facets] = await Promise.all([listEventsFromSearch(params, { scope, signal }), getEventFacetsFromSearch(params, { scope, signal })]);
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/events" what="events" />;
  const summary = <FacetSummary view="events" search={search} initialData={facets.ok ? facets.view : undefined} />;
  return <EventsClient search={search} initialData={result.view} summary={summary} />;
}
