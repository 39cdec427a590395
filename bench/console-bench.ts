/**
 * `npm run bench -- console`: the console at production volume.
 *
 * In an isolated Postgres schema and Redis namespace it bulk-seeds, per store,
 * 100k live leases and ≥ 1M events spread over 7 days (scripts/seed: Postgres
 * INSERT … SELECT generate_series, rollups built by the store's own
 * refreshRollups; Redis pipelined writes of exactly the store's key layout,
 * stats hashes included). Then it measures, with the console's real read models
 * (lib/console) and the real server:
 *
 *   - the leases list filtered by prefix            target ≤ 100 ms
 *   - 7 days of chart data (stats, hour rollups)   target ≤ 200 ms
 *   - `?at=` past state (store.heldAt)             target ≤ 300 ms p95
 *     at instants spread over the 7 days, and within the last two hours (where
 *     the 100k live leases overlap the instant)
 *   - overview TTFB p95, through `next start`      target ≤ 300 ms
 *     (signed in through the local IdP with plain HTTP requests), with requests
 *     spaced so each one reads the stores; back-to-back requests (which share
 *     reads, as polling tabs do) are reported beside them
 *
 * Everything seeded is removed afterwards. Loopback only; bounded in time.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { Pool } from "pg";
import { Redis } from "ioredis";
import { type LeaseStore, PostgresLeaseStore, RedisLeaseStore } from "@leasewatch/lease";
import { RESOURCE_EVENTS_MAX_LEN } from "@leasewatch/lease/internal";
import { getOverview, OVERVIEW_SHARE_MS } from "@/lib/console/overview/get-overview";
import { getPastLeases } from "@/lib/console/past/get-past-leases";
import { listLeases } from "@/lib/console/leases/list-leases";
import { parseLeasesParams, parseOverviewParams } from "@/lib/console/shared/params";
import { generateHistory, type SyntheticEvent } from "../scripts/seed/history";
import { seedPostgresBench } from "../scripts/seed/pg-seed";
import { deleteRedisNamespace, writeRedisEvents, writeRedisLeases, type SyntheticLease } from "../scripts/seed/redis-seed";
import { createRandom } from "../scripts/workload/random";
import type { BenchOutcome } from "./run";

const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
export const LIVE_LEASES = Number(process.env.BENCH_LEASES ?? 100_000);
export const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
export const DAYS = 7;
/** Bucket streams sized so nothing of the million is trimmed (the store's default cap is 100k per bucket). */
export const BENCH_EVENTS_MAX_LEN = 1_000_000;

const TARGETS = { listMs: 100, chartMs: 200, ttfbMs: 300, ttfb30dMs: 500, pastMs: 300 } as const;

export function log(line: string): void {
  console.log(`[console-bench] ${line}`);
}

export function quantile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
}

export async function timeIt<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

/** Runs `fn` a few times unmeasured, then `n` times measured; returns the durations. */
export async function sample(n: number, fn: (i: number) => Promise<unknown>, warmup = 3): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn(-1 - i);
  const samples: number[] = [];
  for (let i = 0; i < n; i++) samples.push((await timeIt(() => fn(i))).ms);
  return samples;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

// ------------------------------------------------------------------ seeding

/** The live leases the Redis store gets: the same shapes as the Postgres seed. */
export function* makeLiveLeases(
  count: number,
  nowMs: number,
  seed: number,
  ttls: readonly number[] = [300_000, 600_000, 1_800_000, 3_600_000],
): Generator<SyntheticLease> {
  const random = createRandom(seed);
  const kinds = ["invoice-sync", "billing-close", "report-export", "webhook-retry", "ledger-export"];
  for (let g = 0; g < count; g++) {
    const ttlMs = ttls[g % ttls.length]!;
    const renewedAt = Math.round(nowMs - random.next() * (ttlMs / 3));
    const acquiredAt = Math.round(renewedAt - random.next() * 7_200_000);
    yield {
      resource: `tenant_${g % 2000}:${kinds[Math.floor(g / 2000) % 5]}:batch-${Math.floor(g / 10_000)}`,
      leaseId: crypto.randomUUID(),
      owner: `worker-${1 + (g % 24)}@billing-7c9f`,
      task: `run-${1000 + (g % 9000)}`,
      // The Redis store floors tokens at its clock in µs; so does the seed.
      fencingToken: String(BigInt(acquiredAt) * 1000n + BigInt(g % 1000)),
      acquiredAt,
      expiresAt: renewedAt + ttlMs,
      ttlMs,
      renewedAt,
      renewals: Math.floor(random.next() * 40),
    };
  }
}

/** Merges two time-ordered event sequences. */
export function* mergeByTime(a: Iterable<SyntheticEvent>, b: readonly SyntheticEvent[]): Generator<SyntheticEvent> {
  let j = 0;
  for (const e of a) {
    while (j < b.length && b[j]!.at <= e.at) yield b[j++]!;
    yield e;
  }
  while (j < b.length) yield b[j++]!;
}

export async function seedRedis(client: Redis, namespace: string, nowMs: number): Promise<{ leases: number; events: number }> {
  const target = { client, namespace, buckets: 16, eventsMaxLen: BENCH_EVENTS_MAX_LEN, evidsMaxLen: RESOURCE_EVENTS_MAX_LEN };
  const leases = [...makeLiveLeases(LIVE_LEASES, nowMs, 5)];
  const written = await writeRedisLeases(target, leases, nowMs);
  const acquiredEvents: SyntheticEvent[] = leases
    .map((l) => ({ at: l.acquiredAt, kind: "acquired" as const, resource: l.resource, leaseId: l.leaseId, owner: l.owner, task: l.task, fencingToken: l.fencingToken }))
    .sort((x, y) => x.at - y.at);
  const history = generateHistory({
    from: nowMs - DAYS * 86_400_000,
    to: nowMs,
    // generateHistory follows a daily rhythm around this mean; aim a little high so ≥ EVENTS land.
    targetEvents: Math.round((EVENTS - acquiredEvents.length) * 1.08),
    random: createRandom(9),
    tokenFor: (n, at) => String(BigInt(Math.round(at)) * 1000n + BigInt(n % 1000)),
  });
  const { written: events } = await writeRedisEvents(target, mergeByTime(history, acquiredEvents), "fresh", nowMs);
  return { leases: written, events };
}

// ------------------------------------------------------------------ signing in

/** A cookie jar for one host: every server here is 127.0.0.1, and cookies ignore ports. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  has(name: string): boolean {
    return [...this.cookies.keys()].some((k) => k === name || k.endsWith(`.${name}`) || k.startsWith(`${name}.`));
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

async function request(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(url, { ...init, redirect: "manual", headers: { ...(init.headers as Record<string, string>), cookie: jar.header() } });
  jar.store(response);
  return response;
}

/** Follows redirects by hand (so every Set-Cookie along the way lands in the jar). */
async function follow(jar: CookieJar, url: string, init: RequestInit = {}): Promise<{ response: Response; url: string }> {
  let current = url;
  let response = await request(jar, current, init);
  for (let hops = 0; hops < 15 && response.status >= 300 && response.status < 400; hops++) {
    current = new URL(response.headers.get("location")!, current).href;
    await response.arrayBuffer();
    response = await request(jar, current);
  }
  return { response, url: current };
}

/**
 * The real sign-in, without a browser: next-auth's CSRF token and sign-in POST,
 * the IdP's login form (the demo IdP takes any password), back through the
 * callback — until the console has set its session cookie.
 */
export async function signIn(consoleUrl: string, login: string): Promise<CookieJar> {
  const jar = new CookieJar();
  const csrf = (await (await request(jar, `${consoleUrl}/api/auth/csrf`)).json()) as { csrfToken: string };
  const form = new URLSearchParams({ csrfToken: csrf.csrfToken, callbackUrl: `${consoleUrl}/` });
  let { response, url } = await follow(jar, `${consoleUrl}/api/auth/signin/oidc`, {
    method: "POST",
    body: form,
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  for (let step = 0; step < 4 && !jar.has("next-auth.session-token"); step++) {
    const html = await response.text();
    const action = /<form[^>]*action="([^"]+)"/i.exec(html)?.[1];
    if (!action) throw new Error(`sign-in stalled at ${url} (HTTP ${response.status}) without a form`);
    const fields = new URLSearchParams();
    for (const m of html.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/gi)) fields.set(m[1]!, m[2]!);
    fields.set("login", login);
    fields.set("password", "bench");
    ({ response, url } = await follow(jar, new URL(action.replace(/&amp;/g, "&"), url).href, {
      method: "POST",
      body: fields,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    }));
  }
  await response.arrayBuffer();
  if (!jar.has("next-auth.session-token")) throw new Error(`sign-in as ${login} did not produce a session (ended at ${url})`);
  return jar;
}

// ------------------------------------------------------------------ measuring

export interface Row {
  what: string;
  store: string;
  p50: number;
  p95: number;
  target?: number;
  /** Which percentile the target applies to. */
  on?: "p50" | "p95";
  /** Printed after the result: what was measured when it is not obvious, or why nothing was. */
  note?: string;
}

export function printTable(rows: Row[]): boolean {
  const hasNotes = rows.some((r) => r.note);
  const header = ["measurement", "store", "p50 ms", "p95 ms", "target", "result", ...(hasNotes ? ["note"] : [])];
  const lines = rows.map((r) => {
    const value = r.on === "p50" ? r.p50 : r.p95;
    const result = r.target === undefined ? "" : value <= r.target ? "ok" : "MISS";
    const cells = [r.what, r.store, r.p50.toFixed(1), r.p95.toFixed(1), r.target === undefined ? "—" : `${r.on} ≤ ${r.target}`, result];
    return hasNotes ? [...cells, r.note ?? ""] : cells;
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => (i >= 2 && i <= 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ");
  console.log(`\n${fmt(header)}\n${widths.map((w) => "-".repeat(w)).join("  ")}\n${lines.map(fmt).join("\n")}\n`);
  return rows.every((r) => r.target === undefined || (r.on === "p50" ? r.p50 : r.p95) <= r.target);
}

async function measureReadModels(stores: LeaseStore[], rows: Row[]): Promise<void> {
  const random = createRandom(3);
  for (const store of stores) {
    const entries = [{ store }];
    // A different tenant each time: no answer is served from a warm cache of the previous one.
    const prefixes = ["invoice-sync", "billing-close", "report-export", "webhook-retry", "ledger-export"];
    const listSamples = await sample(40, async () => {
      // The prefix of a seeded live lease (see makeLiveLeases / seedPostgresBench).
      const g = random.int(0, LIVE_LEASES - 1);
      const prefix = `tenant_${g % 2000}:${prefixes[Math.floor(g / 2000) % 5]}`;
      const parsed = parseLeasesParams({ store: store.name, prefix });
      if (!parsed.ok) throw new Error(parsed.problem.message);
      const result = await listLeases(parsed.params, { entries });
      if (!result.ok || result.view.items.length === 0) throw new Error(`list ${prefix} on ${store.name} returned nothing`);
    });
    rows.push({ what: "leases list, prefix filter (read model)", store: store.name, p50: quantile(listSamples, 0.5), p95: quantile(listSamples, 0.95), target: TARGETS.listMs, on: "p95" });

    const statsSamples = await sample(20, async () => {
      const to = new Date();
      const buckets = await store.stats({ from: new Date(to.getTime() - DAYS * 86_400_000), to, bucketMs: 3_600_000, prefixDepth: 2 });
      if (buckets.reduce((n, b) => n + b.counts.acquired, 0) === 0) throw new Error(`7-day stats on ${store.name} are empty`);
    });
    rows.push({ what: "chart data, 7 days (stats rollups)", store: store.name, p50: quantile(statsSamples, 0.5), p95: quantile(statsSamples, 0.95), target: TARGETS.chartMs, on: "p95" });

    // Every store read of the overview, nothing reused: what a request costs on a cold server.
    const overviewOf = (reuseClosedBuckets: boolean) => async () => {
      const parsed = parseOverviewParams({ store: store.name, window: "7d" });
      if (!parsed.ok) throw new Error(parsed.problem.message);
      const result = await getOverview(parsed.params, { entries, reuseClosedBuckets });
      if (!result.ok) throw new Error(result.problem.message);
    };
    const coldSamples = await sample(15, overviewOf(false));
    rows.push({ what: "overview read model, 7 days, every bucket read", store: store.name, p50: quantile(coldSamples, 0.5), p95: quantile(coldSamples, 0.95) });
    // As the server reads it: closed buckets (all but the newest hours) are remembered.
    const warmSamples = await sample(15, overviewOf(true));
    rows.push({ what: "overview read model, 7 days, closed buckets reused", store: store.name, p50: quantile(warmSamples, 0.5), p95: quantile(warmSamples, 0.95) });
  }
}

/** `?at=` through the read model the page uses: the first page (50) of what was held at the instant. */
async function measurePastState(stores: LeaseStore[], rows: Row[]): Promise<void> {
  const random = createRandom(11);
  for (const store of stores) {
    const entries = [{ store }];
    const atSpan = (label: string, spanMs: number) => async () => {
      const samples = await sample(40, async () => {
        const at = new Date(Date.now() - 60_000 - random.next() * spanMs);
        const result = await getPastLeases({ at, store: store.name, limit: 50 }, { entries });
        if (!result.ok) throw new Error(result.problem.message);
        const outcome = result.view.stores[0];
        if (!outcome?.ok) throw new Error(`?at= on ${store.name} failed: ${outcome ? outcome.error : "no answer"}`);
        if (result.view.gaps.length > 0) throw new Error(`?at= on ${store.name}: ${result.view.gaps[0]!.message}`);
      });
      rows.push({ what: `?at= past state, instant in the last ${label}`, store: store.name, p50: quantile(samples, 0.5), p95: quantile(samples, 0.95), target: TARGETS.pastMs, on: "p95" });
    };
    await atSpan("7 days", (DAYS - 0.1) * 86_400_000)();
    await atSpan("2 hours (live leases overlap)", 7_200_000)();
    // A filter that the index cannot narrow (owner), over the whole week.
    const ownerSamples = await sample(20, async () => {
      const at = new Date(Date.now() - 60_000 - random.next() * (DAYS - 0.1) * 86_400_000);
      const result = await getPastLeases({ at, store: store.name, owner: `worker-${random.int(1, 24)}@billing-7c9f`, limit: 50 }, { entries });
      if (!result.ok || !result.view.stores[0]?.ok) throw new Error(`?at=&owner= on ${store.name} failed`);
    });
    rows.push({ what: "?at= past state + owner filter, 7 days", store: store.name, p50: quantile(ownerSamples, 0.5), p95: quantile(ownerSamples, 0.95), target: TARGETS.pastMs, on: "p95" });
  }
}

/** `n` measured GETs of the overview (after 3 unmeasured), `gapMs` apart: time to headers and to the last byte. */
async function fetchOverview(jar: CookieJar, url: string, n: number, gapMs: number): Promise<{ ttfb: number[]; full: number[] }> {
  const ttfb: number[] = [];
  const full: number[] = [];
  for (let i = -3; i < n; i++) {
    const start = performance.now();
    const response = await fetch(url, { redirect: "manual", headers: { cookie: jar.header() } });
    const headersAt = performance.now();
    const html = await response.text();
    const doneAt = performance.now();
    if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}; expected the signed-in overview`);
    if (i === -3 && !/bob/.test(html)) throw new Error("the overview did not render for the signed-in user");
    if (i >= 0) {
      ttfb.push(headersAt - start);
      full.push(doneAt - start);
    }
    if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  return { ttfb, full };
}

export async function measureOverviewHttp(storesEnv: string, rows: Row[], storesLabel = "both"): Promise<void> {
  const { startStack } = await import("../scripts/stack");
  const [port, oidcPort] = [await freePort(), await freePort()];
  const quiet: string[] = [];
  const stack = await startStack({
    port,
    oidcPort,
    env: { LEASEWATCH_STORES: storesEnv },
    workload: false,
    log: (line) => {
      quiet.push(line);
      if (/\[stack\]|\[build\].*(error|fail)/i.test(line)) log(line);
    },
  });
  try {
    const jar = await signIn(stack.url, "bob");
    for (const window of ["1h", "7d", "30d"] as const) {
      const url = `${stack.url}/?window=${window}`;
      // Back to back: like many tabs polling at once, identical reads share one answer.
      const burst = await fetchOverview(jar, url, 30, 0);
      // Spaced past OVERVIEW_SHARE_MS: every request reads the stores (closed buckets still reused).
      const spaced = await fetchOverview(jar, url, 15, OVERVIEW_SHARE_MS + 100);
      rows.push({ what: `overview / window=${window}: TTFB, each request reads the stores`, store: storesLabel, p50: quantile(spaced.ttfb, 0.5), p95: quantile(spaced.ttfb, 0.95), target: window === "30d" ? TARGETS.ttfb30dMs : TARGETS.ttfbMs, on: "p95" });
      rows.push({ what: `overview / window=${window}: whole HTML, each request reads`, store: storesLabel, p50: quantile(spaced.full, 0.5), p95: quantile(spaced.full, 0.95) });
      rows.push({ what: `overview / window=${window}: TTFB, back to back (reads shared)`, store: storesLabel, p50: quantile(burst.ttfb, 0.5), p95: quantile(burst.ttfb, 0.95) });
      rows.push({ what: `overview / window=${window}: whole HTML, back to back`, store: storesLabel, p50: quantile(burst.full, 0.5), p95: quantile(burst.full, 0.95) });
    }
  } finally {
    await stack.stop();
  }
}

export async function run(): Promise<BenchOutcome> {
  // `--scale N`: N times the volume over 30 days on four stores (bench/console-scale-bench.ts).
  const { parseScaleArgs, runScale } = await import("./console-scale-bench");
  const scale = parseScaleArgs(process.argv.slice(2));
  if (scale) return runScale(scale);
  const suffix = randomBytes(5).toString("hex");
  const schema = `lw_bench_${suffix}`;
  const namespace = `lwb_${suffix}`;
  const pool = new Pool({ connectionString: DATABASE_URL, max: 4 });
  pool.on("error", () => {});
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  redis.on("error", () => {});
  const pgStore = new PostgresLeaseStore({ name: "pg-bench", pool, schema });
  const redisStore = new RedisLeaseStore({ name: "redis-bench", url: REDIS_URL, namespace, eventsMaxLen: BENCH_EVENTS_MAX_LEN });
  const rows: Row[] = [];
  try {
    log(`seeding ${LIVE_LEASES.toLocaleString("en")} live leases and ≥ ${EVENTS.toLocaleString("en")} events per store over ${DAYS} days (schema ${schema}, namespace ${namespace})`);
    await pgStore.migrate();
    const now = new Date();
    const pgSeed = await timeIt(() => seedPostgresBench(pool, { schema, leases: LIVE_LEASES, events: EVENTS, from: new Date(now.getTime() - DAYS * 86_400_000), to: now }));
    log(`postgres: ${pgSeed.value.leases.toLocaleString("en")} leases, ${pgSeed.value.events.toLocaleString("en")} events in ${(pgSeed.ms / 1000).toFixed(1)} s`);
    const rollups = await timeIt(() => pgStore.refreshRollups({ since: new Date(now.getTime() - DAYS * 86_400_000 - 3_600_000) }));
    log(`postgres: rollups rebuilt by the store's refreshRollups in ${(rollups.ms / 1000).toFixed(1)} s`);
    const redisSeed = await timeIt(() => seedRedis(redis, namespace, Date.now()));
    log(`redis: ${redisSeed.value.leases.toLocaleString("en")} leases, ${redisSeed.value.events.toLocaleString("en")} events in ${(redisSeed.ms / 1000).toFixed(1)} s`);
    log(`live leases as the stores count them: postgres ${await pgStore.countActive()}, redis ${await redisStore.countActive()}`);

    // The seeder writes the hold index heldAt() reads with the other read models; this catches up
    // anything it left to the projector and trims the index with the streams.
    const projected = await timeIt(() => redisStore.projectHolds());
    log(`redis: hold index projected (${projected.value.projected.toLocaleString("en")} holds) in ${(projected.ms / 1000).toFixed(1)} s`);

    await measureReadModels([pgStore, redisStore], rows);
    await measurePastState([pgStore, redisStore], rows);
    if (process.env.BENCH_CONSOLE_SKIP_HTTP === "1") return { isMet: printTable(rows) };
    const storesEnv = JSON.stringify([
      { name: "pg-bench", kind: "postgres", url: DATABASE_URL, schema },
      { name: "redis-bench", kind: "redis", url: REDIS_URL, namespace },
    ]);
    try {
      await measureOverviewHttp(storesEnv, rows);
    } catch (error) {
      log(`overview over HTTP not measured: ${error instanceof Error ? error.message : String(error)}`);
      rows.push({ what: "overview TTFB (next start) — NOT MEASURED, see above", store: "both", p50: NaN, p95: NaN, target: TARGETS.ttfbMs, on: "p95" });
    }
  } finally {
    await pgStore.close();
    await redisStore.close();
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch((e: unknown) => log(`could not drop ${schema}: ${String(e)}`));
    const deleted = await deleteRedisNamespace(redis, namespace).catch(() => -1);
    log(`cleaned up: dropped schema ${schema}, deleted ${deleted} redis keys`);
    await pool.end();
    redis.disconnect();
  }
  return { isMet: printTable(rows) };
}
