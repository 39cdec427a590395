import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { ObservedLockDetail } from "@/components/observed/observed-lock";
import { startPageRead } from "@/components/page-read";
import { getObservedLock, parseObservedLockRoute } from "@/lib/console/shared/observed-history";

export const metadata: Metadata = { title: "Observed lock" };

type RouteParams = { store: string; resource: string[] };

export default async function ObservedLockPage({ params }: { params: Promise<RouteParams> }) {
  const read = await startPageRead("leases:read");
  if (!read.ok) return read.notice;
  const route = parseObservedLockRoute(await params);
  if (!route) notFound();
  // Not configured, or outside the viewer's scope: the same "not found", so a name outside it reveals nothing.
  const view = await getObservedLock(route, { scope: read.scope });
  if (!view) notFound();
  return <ObservedLockDetail view={view} />;
}
