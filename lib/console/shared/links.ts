/**
 * Links between console pages (client-safe, no server imports). Every filter
 * lives in the URL, so these are also the drill-down links alerts use.
 */

/** How many earlier pages the "previous" link remembers. */
export const MAX_PREV_CURSORS = 20;

/**
 * Path of one lease page. Each "/"-separated part of the resource is encoded on
 * its own so the path stays readable; a resource with empty parts ("a//b", "/a")
 * would lose them as path segments, so it is sent as one segment with "/" encoded.
 * A part that is "." or ".." is escaped (escapeDotPart), or the browser would resolve
 * it and open another page. parseLeaseDetailParams (params.ts) undoes both.
 */
export function leaseHref(store: string, resource: string): string {
  return `/locks/${encodeURIComponent(store)}/${encodeResourcePath(resource)}`;
}

/** One observed lock's page (a lock the library does not own), its path encoded as leaseHref's. */
export function observedLockHref(store: string, resource: string): string {
  return `/observed/${encodeURIComponent(store)}/${encodeResourcePath(resource)}`;
}

/** An observed store's section on /observed. */
export function observedStoreHref(store: string): string {
  return `/observed#observed-${encodeURIComponent(store)}`;
}

/** The API twin of leaseHref. */
export function leaseApiHref(store: string, resource: string): string {
  return `/api/leases/${encodeURIComponent(store)}/${encodeResourcePath(resource)}`;
}

function encodeResourcePath(resource: string): string {
  const parts = resource.split("/");
  return parts.some((p) => p === "") ? encodeURIComponent(resource) : parts.map((p) => encodeURIComponent(escapeDotPart(p))).join("/");
}

/** One or two dots after any number of "~": the parts escapeDotPart changes. */
const DOT_PART = /^~*\.{1,2}$/;

/**
 * "." and ".." path segments (and their "%2e" spellings, which encodeURIComponent never
 * produces: it sends "%" as "%25") are resolved away by browsers. Such a part gets a "~"
 * in front; so that "~.." still means itself, every part of dots after "~"s gets one more.
 */
export function escapeDotPart(part: string): string {
  return DOT_PART.test(part) ? `~${part}` : part;
}

/** The inverse of escapeDotPart, for one decoded path segment. */
export function unescapeDotPart(segment: string): string {
  return segment.startsWith("~") && DOT_PART.test(segment) ? segment.slice(1) : segment;
}

export type QueryValues = Record<string, string | number | readonly string[] | null | undefined>;

/** A query string ("?a=1&b=x%3Ay") with empty values dropped; arrays are comma-joined. */
export function buildQuery(params: QueryValues): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === null || value === undefined || value === "") continue;
    if (Array.isArray(value)) {
      if (value.length > 0) search.set(key, value.join(","));
    } else {
      search.set(key, String(value));
    }
  }
  const s = search.toString();
  return s ? `?${s}` : "";
}

/** `current` with `changes` applied (null/"" removes a key); paging keys are dropped unless given. */
export function withParams(current: URLSearchParams | string, changes: QueryValues, keepPaging = false): string {
  const next = new URLSearchParams(typeof current === "string" ? current : current.toString());
  if (!keepPaging) {
    next.delete("cursor");
    next.delete("prev");
  }
  for (const [key, value] of Object.entries(changes)) {
    if (value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0)) next.delete(key);
    else next.set(key, Array.isArray(value) ? value.join(",") : String(value));
  }
  const s = next.toString();
  return s ? `?${s}` : "";
}

/** A page's `searchParams` object as a query string (no "?"), the key its live query polls with. */
export function toSearchString(params: Record<string, string | string[] | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) search.append(key, v);
  }
  return search.toString();
}

/** Filters the list pages accept in their URL (see params.ts); unset keys are left out. */
export interface ListLinkFilters {
  store?: string;
  prefix?: string;
  owner?: string;
  task?: string;
  resource?: string;
  state?: string;
  kind?: string | readonly string[];
  token?: string;
  lease?: string;
  window?: string;
  from?: string;
  to?: string;
  at?: string;
}

/** The leases page (`/locks`) narrowed to `filters`. */
export function locksHref(filters: ListLinkFilters = {}): string {
  return `/locks${buildQuery({ ...filters })}`;
}

/** How many leases of each stuck state per store the overview's "overdue / lapsed now" tile reads; past it, "N+". */
export const STUCK_TILE_LIMIT = 100;

/** The query of that tile's read (`/api/leases`, and the page's first render): the stuck list, narrowed as the overview is. */
export function stuckTileQuery(store: string | null, prefix: string | null): Record<string, string> {
  return { state: "stuck", ...(store ? { store } : {}), ...(prefix ? { prefix } : {}), limit: String(STUCK_TILE_LIMIT) };
}

/** The events page (`/events`) narrowed to `filters`. */
export function eventsHref(filters: ListLinkFilters = {}): string {
  return `/events${buildQuery({ ...filters })}`;
}

/** One owner's page: what it holds now, its last events, renewal failures, when it was last seen. */
export function ownerHref(owner: string, filters: Pick<ListLinkFilters, "store" | "window" | "from" | "to"> = {}): string {
  return `/owners/${encodeURIComponent(owner)}${buildQuery({ ...filters })}`;
}
