import { randomUUID } from "node:crypto";
import type { AppSession } from "@/lib/auth/session";
import { TokenBucketLimiter } from "@/lib/console/shared/rate-limit";
import { respondWithRead } from "@/lib/console/shared/api-response";
import type { ReadOptions } from "@/lib/console/shared/fan-out";
import { getLeaseDetailFromRoute } from "@/lib/console/leases/get-lease-detail";
import { getOverviewFromSearch } from "@/lib/console/overview/get-overview";
import { listEventsFromSearch } from "@/lib/console/events/list-events";
import { listLeasesFromSearch } from "@/lib/console/leases/list-leases";
import type { ReadResult } from "@/lib/console/shared/views";

/**
 * Viewer requests built from the parameters the read routes accept, with valid,
 * valid-ish and hostile values, answered through the same edge as the routes
 * (respondWithRead). The fuzz test runs them at test volume; the console bench
 * runs them against its seeded stores.
 */
export type ViewerRoute = "leases" | "events" | "overview" | "detail";

export interface ViewerRequest {
  route: ViewerRoute;
  /** What was asked, for messages: `route?query` or `detail?detail=<store>/<segments>`. */
  what: string;
  /** Answers as the route would: status and body. */
  read: () => Promise<Response>;
}

export interface ViewerRequestOptions {
  /** The configured stores' names; they lead the `store` values, before unknown and hostile ones. */
  storeNames: readonly [string, ...string[]];
  /** Values that match the seeded data, tried before the generic ones (same keys as the parameters). */
  seeded?: { prefix?: readonly string[]; owner?: readonly string[]; task?: readonly string[]; resource?: readonly string[] };
  /** Route segments of lease pages that exist; the first two detail choices. */
  detailSegments?: readonly [string[], string[]];
  nowMs?: number;
}

export const VIEWER_PARAMS = {
  leases: ["store", "prefix", "owner", "task", "state", "sort", "window", "from", "to", "limit", "cursor", "prev"],
  events: ["store", "kind", "prefix", "owner", "task", "token", "lease", "resource", "window", "from", "to", "limit", "cursor", "prev"],
  overview: ["store", "window", "from", "to", "depth"],
} as const;

/** The values each parameter takes: the seeded ones (when given) first, then the test's fixed vocabulary. */
export function buildViewerValues(options: ViewerRequestOptions): Record<string, string[]> {
  const nowMs = options.nowMs ?? Date.now();
  const first = options.storeNames[0];
  const seeded = options.seeded ?? {};
  return {
    store: [...options.storeNames, "nope", "", first.toUpperCase(), "a".repeat(300)],
    prefix: [...(seeded.prefix ?? []), "jobs:", "jobs:1", "", "%", "_", "jobs:\u0000", "'; DROP TABLE x; --", "é:ü:字", "a".repeat(2000), "jobs:*", "\\"],
    owner: [...(seeded.owner ?? []), "w1", "nobody", "", " ", "w1' OR '1'='1", "x".repeat(1000), "%"],
    task: [...(seeded.task ?? []), "t1", "nothing", "", "t".repeat(600), "\u202e"],
    resource: [...(seeded.resource ?? []), "jobs:1", "jobs:1:2", "", "/", "..", "r".repeat(5000)],
    kind: ["acquired", "released,expired", "contended", "bogus", "", ",,,", "acquired,bogus"],
    token: ["1", "0", "18446744073709551616", "-1", "1e9", "abc", "9".repeat(40)],
    lease: [randomUUID(), "not-a-uuid", "", "00000000-0000-0000-0000-000000000000"],
    window: ["15m", "1h", "6h", "24h", "7d", "custom", "30d", "", "1y"],
    from: ["2026-01-01T00:00:00Z", new Date(nowMs - 3_600_000).toISOString(), "yesterday", "", "0", "9999-12-31T23:59:59Z", "2026-13-45T99:99:99Z"],
    to: [new Date(nowMs).toISOString(), "2020-01-01T00:00:00Z", "tomorrow", "", "-1"],
    limit: ["1", "50", "200", "201", "0", "-5", "1e3", "abc", "99999999999"],
    cursor: ["", "abc", "eyJ4IjoxfQ", Buffer.from(`{"${first}":"zzz"}`).toString("base64url"), Buffer.from("[1,2]").toString("base64url"), "%%%"],
    prev: ["", "abc", "a,b,c"],
    sort: ["expires", "held_longest", "newest", "random", ""],
    state: ["held", "expiring", "overdue", "lapsed", "expired", "dead", ""],
    depth: ["1", "2", "3", "0", "4", "-1", "x"],
  };
}

/** A signed-in viewer whose reads are never rate limited (the limit is not what is being tried). */
export const FUZZ_VIEWER: AppSession = { user: { id: "fuzz", email: null, name: "fuzz", roles: ["viewer"], scopes: { viewer: { kind: "all" } } }, signedInAt: Date.now(), authTime: null };

/**
 * `count` requests from `random`. Each request's parameters are drawn when it is
 * generated, so one seed gives the same sequence of requests every time.
 */
export function* generateViewerRequests(
  random: () => number,
  count: number,
  readOptions: ReadOptions,
  options: ViewerRequestOptions,
): Generator<ViewerRequest> {
  const values = buildViewerValues(options);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const unlimited = new TokenBucketLimiter({ capacity: 1e9, refillPerSecond: 1e9 });
  const [detailA, detailB] = options.detailSegments ?? [["jobs:1:1"], ["jobs", "1"]];
  for (let i = 0; i < count; i++) {
    const route = pick(["leases", "events", "overview", "detail"] as const);
    if (route === "detail") {
      const segments = pick([detailA, detailB, [""], ["%E0%A4%A"], ["a".repeat(3000)], ["jobs:%2F"]]);
      const storeName = pick(values.store!);
      yield {
        route,
        what: `detail?detail=${storeName}/${segments.join("/")}`,
        read: () => respondWithRead(FUZZ_VIEWER, "leases:read", () => getLeaseDetailFromRoute({ store: storeName, resource: segments }, readOptions), unlimited),
      };
      continue;
    }
    const search = new URLSearchParams();
    for (const name of VIEWER_PARAMS[route]) {
      if (random() < 0.35) search.append(name, pick(values[name]!));
      if (random() < 0.03) search.append(name, pick(values[name]!)); // repeated parameter
    }
    const readers: Record<typeof route, (search: URLSearchParams, options: ReadOptions) => Promise<ReadResult<unknown>>> = {
      leases: listLeasesFromSearch,
      events: listEventsFromSearch,
      overview: getOverviewFromSearch,
    };
    const fn = readers[route];
    const permission = route === "events" ? "events:read" : "leases:read";
    yield {
      route,
      what: `${route}?${search.toString()}`,
      read: () => respondWithRead(FUZZ_VIEWER, permission, () => fn(search, { ...readOptions, reuseClosedBuckets: false }), unlimited),
    };
  }
}

/** A stack frame in a body: what a viewer must never see. */
export const STACK_TRACE = /\n\s+at [^\n]+:\d+:\d+/;
