/**
 * Server-only: the header's jump box. One query — a resource, a prefix, an owner,
 * a lease id or a fencing token — resolved across every store to the page that
 * answers it:
 *
 *   exact resource        → its lease page (the store holding it now first), or an
 *                           observed lock's page (held at the last sample before any history)
 *   fencing token / lease → the lease page while that grant still holds, else its events
 *   owner                 → the owner page
 *   prefix                → the leases under it, else its events
 *
 * Every lookup is one small bounded read per store (a key, limit 1, a 24 h window).
 */
import { z } from "zod";
import type { Lease, LeaseEvent, LeaseStore } from "@leasewatch/lease";
import { ZLeaseId, ZOwner, ZPrefix, ZResource } from "@leasewatch/lease/internal";
import { SCOPE_ALL } from "@/lib/auth/scope";
import { fanOutStores, resolveEntries, type ReadOptions } from "@/lib/console/shared/fan-out";
import { findObservedLock } from "@/lib/console/shared/observed-history";
import type { JumpResult } from "./jump-types";
import { eventsHref, leaseHref, locksHref, ownerHref } from "@/lib/console/shared/links";
import { WINDOW_MS, type SearchParamsInput } from "@/lib/console/shared/params";
import type { ReadResult } from "@/lib/console/shared/views";

const MAX_QUERY_CHARS = 512;
const ZQuery = z
  .string({ error: "type a resource, prefix, owner, lease id or fencing token" })
  .transform((s) => s.trim())
  .pipe(
    z
      .string()
      .min(1, { error: "type a resource, prefix, owner, lease id or fencing token" })
      .max(MAX_QUERY_CHARS, { error: `must be at most ${MAX_QUERY_CHARS} characters` }),
  );

const TOKEN_PATTERN = /^[0-9]{1,30}$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface StoreFindings {
  current: Lease | null;
  resourceSeen: boolean;
  grant: { event: LeaseEvent; isHeld: boolean; by: "token" | "lease" } | null;
  ownerSeen: boolean;
  prefixHeld: boolean;
  prefixSeen: boolean;
}

const isValid = (schema: z.ZodType, value: string) => schema.safeParse(value).success;

async function findIn(store: LeaseStore, q: string, window: { from: Date; to: Date }): Promise<StoreFindings> {
  const asResource = isValid(ZResource, q);
  const asOwner = isValid(ZOwner, q);
  const asPrefix = isValid(ZPrefix, q);
  const asToken = TOKEN_PATTERN.test(q);
  const asLease = UUID_PATTERN.test(q) && isValid(ZLeaseId, q);
  const none = Promise.resolve(null);

  const [current, resourceEvent, grantEvent, ownerLease, prefixLease] = await Promise.all([
    asResource ? store.get(q) : none,
    asResource ? store.events({ resource: q, limit: 1 }).then((p) => p.items[0] ?? null) : none,
    asToken || asLease
      ? store
          .events({ ...(asToken ? { fencingToken: q } : { leaseId: q.toLowerCase() }), ...window, limit: 1 })
          .then((p) => p.items[0] ?? null)
      : none,
    asOwner ? store.list({ owner: q, limit: 1 }).then((p) => p.items[0] ?? null) : none,
    asPrefix ? store.list({ prefix: q, limit: 1 }).then((p) => p.items[0] ?? null) : none,
  ]);
  let grant: StoreFindings["grant"] = null;
  if (grantEvent) {
    const holder = grantEvent.leaseId ? await store.get(grantEvent.resource) : null;
    grant = { event: grantEvent, isHeld: holder !== null && holder.leaseId === grantEvent.leaseId, by: asToken ? "token" : "lease" };
  }
  // The window's events by owner or prefix are the costly reads (Redis reads its
  // streams for them): only when the cheap lookups found nothing.
  const isFound = current !== null || resourceEvent !== null || grant !== null || ownerLease !== null || prefixLease !== null;
  const [ownerEvent, prefixEvent] = isFound
    ? [null, null]
    : await Promise.all([
        asOwner ? store.events({ owner: q, ...window, limit: 1 }).then((p) => p.items[0] ?? null) : none,
        asPrefix ? store.events({ prefix: q, ...window, limit: 1 }).then((p) => p.items[0] ?? null) : none,
      ]);
  return {
    current,
    resourceSeen: resourceEvent !== null,
    grant,
    ownerSeen: ownerLease !== null || ownerEvent !== null,
    prefixHeld: prefixLease !== null,
    prefixSeen: prefixEvent !== null,
  };
}

export async function resolveJump(query: string, options: ReadOptions): Promise<ReadResult<JumpResult>> {
  const parsed = ZQuery.safeParse(query);
  if (!parsed.success) return { ok: false, problem: { param: "q", message: parsed.error.issues[0]?.message ?? "is invalid" } };
  const q = parsed.data;
  const nowMs = options.nowMs ?? Date.now();
  const window = { from: new Date(nowMs - WINDOW_MS["24h"]), to: new Date(nowMs + 1) };
  const entries = await resolveEntries(options);
  // Observed locks (locks the library does not own) by exact name, from the observer's record.
  const observedLookup = options.entries === undefined ? findObservedLock(q, { scope: options.scope ?? SCOPE_ALL }).catch(() => null) : Promise.resolve(null);
  const [outcomes, observed] = await Promise.all([fanOutStores(entries, (store) => findIn(store, q, window), options.timeoutMs), observedLookup]);
  const found = outcomes.flatMap((o) => (o.ok ? [{ store: o.store, ...o.data }] : []));
  const unreadStores = outcomes.filter((o) => !o.ok).map((o) => o.store);
  const answer = (result: Omit<JumpResult, "query" | "unreadStores">): ReadResult<JumpResult> => ({
    ok: true,
    view: { query: q, unreadStores, ...result },
  });

  const holding = found.find((f) => f.current !== null);
  if (holding) return answer({ found: true, href: leaseHref(holding.store, q), what: `the lease on ${q} in ${holding.store}` });
  if (observed?.isHeld) return answer({ found: true, href: observed.href, what: `the observed lock ${q} in ${observed.store}` });
  const seen = found.find((f) => f.resourceSeen);
  if (seen) return answer({ found: true, href: leaseHref(seen.store, q), what: `the history of ${q} in ${seen.store}` });
  if (observed) return answer({ found: true, href: observed.href, what: `the observed history of ${q} in ${observed.store}` });

  const grant = found.find((f) => f.grant !== null);
  if (grant?.grant) {
    const { event, isHeld, by } = grant.grant;
    const label = by === "token" ? `fencing token ${q}` : `lease ${q}`;
    if (isHeld) return answer({ found: true, href: leaseHref(grant.store, event.resource), what: `${label}, holding ${event.resource} in ${grant.store}` });
    const filter = by === "token" ? { token: q } : { lease: q.toLowerCase() };
    return answer({ found: true, href: eventsHref({ store: grant.store, ...filter }), what: `the events of ${label} (${event.resource} in ${grant.store})` });
  }

  if (found.some((f) => f.ownerSeen)) return answer({ found: true, href: ownerHref(q), what: `owner ${q}` });
  if (found.some((f) => f.prefixHeld)) return answer({ found: true, href: locksHref({ prefix: q }), what: `the leases under ${q}` });
  if (found.some((f) => f.prefixSeen)) return answer({ found: true, href: eventsHref({ prefix: q, window: "24h" }), what: `the last day's events under ${q}` });
  return answer({ found: false, href: null, what: null });
}

export async function resolveJumpFromSearch(search: SearchParamsInput, options: ReadOptions): Promise<ReadResult<JumpResult>> {
  const values = search instanceof URLSearchParams ? search.getAll("q") : [search.q ?? []].flat();
  if (values.length > 1) return { ok: false, problem: { param: "q", message: "was given more than once; give it once" } };
  return resolveJump(values[0] ?? "", options);
}
