import type { ReactElement } from "react";
import { ReadLimitNotice } from "@/components/locks/read-notices";
import { loadShell } from "@/components/shell/load-shell";
import type { Permission } from "@/lib/auth/roles";
import type { ViewerScope } from "@/lib/auth/scope";
import { type AppSession, requirePermission, requireSession, scopeFor } from "@/lib/auth/session";
import { takeRead } from "@/lib/console/shared/api-response";
import { toSearchString } from "@/lib/console/shared/links";
import { pageReadSignal } from "@/lib/console/shared/page-signal";

/** A page's `searchParams`, as Next.js hands them over. */
export type PageSearchParams = Record<string, string | string[] | undefined>;

export type PageRead = { ok: true; session: AppSession; scope: ViewerScope } | { ok: false; notice: ReactElement };

/**
 * What every page that reads the stores does first: a session (else sign-in, coming
 * back to `callbackPath`), the permission (else not authorised), and one read off the
 * user's read rate, since rendering reads the stores like the /api reads. When the rate
 * is spent the page renders `notice` instead of reading. `scope` is where `permission` applies.
 *
 * The frame comes first: reads started beside the layout's keep the event loop busy with their
 * replies and hold the header and the page's skeleton back (at a million leases a store, the
 * overview's first byte came 0.1–1.3 s after the request when they did, 0.03–0.4 s when they wait).
 */
export async function startPageRead(permission: Permission, callbackPath?: string): Promise<PageRead> {
  await loadShell().catch(() => undefined); // its failure is the layout's to show
  const session = await requireSession(callbackPath);
  requirePermission(session, permission);
  const limited = takeRead(session);
  if (limited) return { ok: false, notice: <ReadLimitNotice retryAfterSeconds={limited.retryAfterSeconds} /> };
  return { ok: true, session, scope: scopeFor(session, permission) };
}

export type SearchPageRead =
  | { ok: true; session: AppSession; scope: ViewerScope; params: PageSearchParams; search: string; signal: AbortSignal | undefined }
  | { ok: false; notice: ReactElement };

/**
 * startPageRead for a page whose view is its URL: also the URL's parameters, the same as the
 * search string its client component polls with, and the signal its reads stop on.
 */
export async function startSearchPageRead(permission: Permission, searchParams: Promise<PageSearchParams>): Promise<SearchPageRead> {
  const read = await startPageRead(permission);
  if (!read.ok) return read;
  const params = await searchParams;
  return { ...read, params, search: toSearchString(params), signal: pageReadSignal() };
}
