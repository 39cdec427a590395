import type { Metadata } from "next";
import { EventsClient } from "@/components/events/events-client";
import { ParamProblemNotice } from "@/components/locks/read-notices";
import { requirePermission, requireSession } from "@/lib/auth/session";
import { toSearchString } from "@/lib/console/links";
import { listEventsFromSearch } from "@/lib/console/list-events";

export const metadata: Metadata = { title: "Events" };

type SearchParams = Record<string, string | string[] | undefined>;

export default async function EventsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const session = await requireSession();
  requirePermission(session, "events:read");
  const params = await searchParams;
  const result = await listEventsFromSearch(params);
  if (!result.ok) return <ParamProblemNotice problem={result.problem} resetHref="/events" what="events" />;
  return <EventsClient search={toSearchString(params)} initialData={result.view} />;
}
