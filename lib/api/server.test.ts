import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { compareFencingTokens, type LeaseEvent } from "@leasewatch/lease";
import { sleep, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { stallInsertsBy } from "@/test/support/postgres-tests";
import { collectEvents } from "@/test/support/stores";
import { buildApiServer } from "@/lib/api/server";
import { startApiFixture, type ApiFixture } from "@/test/support/api-server";
import { randomUUID } from "node:crypto";
import http from "node:http";

let api: ApiFixture;
let token: string;

beforeAll(async () => {
  api = await startApiFixture();
  token = await api.createToken({ prefixes: ["ten1:"] });
});
afterAll(async () => {
  await api?.close();
});

const res = (name: string) => `ten1:${randomUUID().slice(0, 8)}:${name}`;

for (const kind of ["postgres", "redis"] as const) {
  describe(`lease contract over HTTP: ${kind}`, () => {
    const store = () => (kind === "postgres" ? api.pg.spec.name : api.redis.spec.name);
    const acquire = (resource: string, ownerId: string, extra: Record<string, unknown> = {}, headers?: Record<string, string>) =>
      api.call(token, "POST", "/v1/locks/acquire", { store: store(), resource, ownerId, task: "job", ttlMs: 10_000, ...extra }, headers);

    it("acquires, is contended, renews and releases; the next holder gets a higher fencing token", async () => {
      const r = res("a");
      const first = await acquire(r, "w1");
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ acquired: true, store: store(), resource: r, ttlMs: 10_000 });
      const handle = String(first.body.leaseId);

      const second = await acquire(r, "w2");
      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({ acquired: false, holder: { owner: expect.stringContaining("/w1"), task: "job" } });

      const renewed = await api.call(token, "POST", `/v1/locks/${handle}/renew`, { ttlMs: 20_000 });
      expect(renewed.status).toBe(200);
      expect(renewed.body).toMatchObject({ renewed: true, ttlMs: 20_000, renewals: 1 });

      const released = await api.call(token, "DELETE", `/v1/locks/${handle}`);
      expect(released.status).toBe(200);
      expect(released.body.released).toBe(true);

      const third = await acquire(r, "w3");
      expect(third.body.acquired).toBe(true);
      expect(compareFencingTokens(String(third.body.fencingToken), String(first.body.fencingToken))).toBe(1);
      await api.call(token, "DELETE", `/v1/locks/${String(third.body.leaseId)}`);
    });

    it("refuses a released or expired lease's handle with lease-not-held, and records the expiry", async () => {
      const r = res("exp");
      const first = await acquire(r, "w1", { ttlMs: 150 });
      const handle = String(first.body.leaseId);
      await sleep(400);
      const taker = await acquire(r, "w2");
      expect(taker.body.acquired).toBe(true);
      expect(compareFencingTokens(String(taker.body.fencingToken), String(first.body.fencingToken))).toBe(1);

      const renew = await api.call(token, "POST", `/v1/locks/${handle}/renew`);
      expect(renew.status).toBe(409);
      expect(renew.headers.get("content-type")).toContain("application/problem+json");
      expect(renew.body.type).toBe("https://leasewatch.dev/problems/lease-not-held");
      const release = await api.call(token, "DELETE", `/v1/locks/${handle}`);
      expect(release.status).toBe(409);
      // The taker still holds it: the stale handle changed nothing.
      const read = await api.call(token, "GET", `/v1/locks/${encodeURIComponent(r)}?store=${store()}`);
      expect(read.status).toBe(200);
      expect(read.body.fencingToken).toBe(taker.body.fencingToken);

      const events = await collectEvents(api.storeByName(store()), { resource: r });
      // The refused renew is itself recorded (renew_failed); the stale release changes nothing.
      expect(events.map((e) => e.kind)).toEqual(["acquired", "expired", "acquired", "renew_failed"]);
      expect(events[0]?.owner).toMatch(/^token:.+\/w1$/);
      await api.call(token, "DELETE", `/v1/locks/${String(taker.body.leaseId)}`);
    });

    it("records a fencing rejection reported by a downstream", async () => {
      const r = res("fence");
      const held = await acquire(r, "w1");
      const report = await api.call(token, "POST", "/v1/fencing/rejections", { store: store(), resource: r, fencingToken: "1", seenToken: String(held.body.fencingToken), by: "ledger" });
      expect(report.status).toBe(200);
      const events = await collectEvents(api.storeByName(store()), { resource: r, kinds: ["fencing_rejected"] });
      expect(events).toHaveLength(1);
      await api.call(token, "DELETE", `/v1/locks/${String(held.body.leaseId)}`);
    });

    it("waits on the server for a lock that is released meanwhile", async () => {
      const r = res("wait");
      const held = await acquire(r, "w1");
      const waiting = acquire(r, "w2", { waitMs: 10_000 });
      await sleep(200);
      await api.call(token, "DELETE", `/v1/locks/${String(held.body.leaseId)}`);
      const got = await waiting;
      expect(got.body.acquired).toBe(true);
      await api.call(token, "DELETE", `/v1/locks/${String(got.body.leaseId)}`);
    });

    it("returns the same lease for a retried acquire with the same Idempotency-Key", async () => {
      const r = res("idem");
      const key = randomUUID();
      const [a, b] = await Promise.all([acquire(r, "w1", {}, { "idempotency-key": key }), acquire(r, "w1", {}, { "idempotency-key": key })]);
      const c = await acquire(r, "w1", {}, { "idempotency-key": key });
      expect(a.body.acquired).toBe(true);
      expect(b.body).toEqual(a.body);
      expect(c.body).toEqual(a.body);
      const other = await acquire(r, "w1", { task: "different" }, { "idempotency-key": key });
      expect(other.status).toBe(422);
      const events = await collectEvents(api.storeByName(store()), { resource: r });
      expect(events.map((e) => e.kind)).toEqual(["acquired"]);
      await api.call(token, "DELETE", `/v1/locks/${String(a.body.leaseId)}`);
    });
  });
}

describe("requests and tokens", () => {
  it("rejects bad input with a 400 problem that names the field", async () => {
    const bad = await api.call(token, "POST", "/v1/locks/acquire", { resource: "ten1:x", ownerId: "w", task: "t", ttlMs: 10, extra: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.type).toBe("https://leasewatch.dev/problems/invalid-request");
    const both = await api.call(token, "POST", "/v1/locks/acquire", { resource: "ten1:x", ownerId: "w", task: "t", ttlMs: 1000, ttlSeconds: 1 });
    expect(both.status).toBe(400);
    expect(String(both.body.detail)).toContain("exactly one of ttlMs or ttlSeconds");
    const big = await api.call(token, "POST", "/v1/locks/acquire", { resource: "ten1:x", ownerId: "w", task: "x".repeat(20_000), ttlMs: 1000 });
    expect(big.status).toBe(413);
    expect(JSON.stringify(big.body)).not.toMatch(/\n\s+at /);
  });

  it("refuses a missing, unknown, revoked or expired token", async () => {
    expect((await api.call(null, "GET", "/v1/locks")).status).toBe(401);
    expect((await api.call("lwk_nope", "GET", "/v1/locks")).status).toBe(401);

    const name = `rev-${randomUUID().slice(0, 6)}`;
    const revocable = await api.createToken({ name, prefixes: ["ten2:"] });
    expect((await api.call(revocable, "GET", "/v1/locks")).status).toBe(200);
    await api.tokens.revoke(name);
    await sleep(1_000);
    expect((await api.call(revocable, "GET", "/v1/locks")).status).toBe(401);

    const shortLived = await api.createToken({ prefixes: ["ten2:"], expiresAt: new Date(Date.now() + 600) });
    expect((await api.call(shortLived, "GET", "/v1/locks")).status).toBe(200);
    await sleep(1_000);
    expect((await api.call(shortLived, "GET", "/v1/locks")).status).toBe(401);
  });

  it("refuses an action the token does not have with 403", async () => {
    const reader = await api.createToken({ prefixes: ["ten1:"], actions: ["read"] });
    const r = await api.call(reader, "POST", "/v1/locks/acquire", { resource: res("ro"), ownerId: "w", task: "t", ttlMs: 1000 });
    expect(r.status).toBe(403);
    expect((await api.call(reader, "GET", "/v1/locks")).status).toBe(200);
  });

  it("limits a flooding token with 429 and Retry-After while another token keeps getting 200s", async () => {
    const flooder = await api.createToken({ prefixes: ["flood:"], ratePerSec: 5 });
    const calm = await api.createToken({ prefixes: ["calm:"] });
    const flood = await Promise.all(Array.from({ length: 40 }, () => api.call(flooder, "GET", "/v1/locks")));
    const limited = flood.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(Number(limited[0]?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limited[0]?.body.type).toBe("https://leasewatch.dev/problems/rate-limited");
    const calmResults = await Promise.all(Array.from({ length: 10 }, () => api.call(calm, "GET", "/v1/locks")));
    expect(calmResults.map((r) => r.status)).toEqual(Array(10).fill(200));

    // While the flood goes on, every one of the calm tenant's requests, one after another,
    // succeeds. Its latency is not asserted (the issue asks for p99 < 10 ms): the flood, the
    // server and this client share one process on a shared 2-core machine, where even an
    // unflooded p99 is far above 10 ms under load (see the API bench for figures).
    let flooding = true;
    const floodLoops = Array.from({ length: 4 }, async () => {
      while (flooding) await api.call(flooder, "GET", "/v1/locks");
    });
    try {
      for (let i = 0; i < 30; i++) expect((await api.call(calm, "GET", "/v1/locks")).status).toBe(200);
    } finally {
      flooding = false;
      await Promise.all(floodLoops);
    }
  });

  it("logs a failed request at info with its request id, and a successful one only at debug", async () => {
    const logged = async (level: string) => {
      const lines: Array<Record<string, unknown>> = [];
      const app = buildApiServer({
        stores: new Map([[api.pg.spec.name, api.pg.store]]),
        tokens: api.tokens,
        handleKey: api.handleKey,
        logger: { level, stream: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) } },
      });
      try {
        const ok = await app.inject({ method: "GET", url: "/v1/locks", headers: { authorization: `Bearer ${token}`, "x-request-id": "req-ok" } });
        expect(ok.statusCode).toBe(200);
        const refused = await app.inject({ method: "GET", url: "/v1/locks", headers: { authorization: "Bearer lwk_nope", "x-request-id": "req-refused" } });
        expect(refused.statusCode).toBe(401);
      } finally {
        await app.close();
      }
      return lines.filter((l) => typeof l.reqId === "string");
    };
    const atInfo = await logged("info");
    expect(atInfo).toEqual([expect.objectContaining({ level: 30, reqId: "req-refused", statusCode: 401, method: "GET", url: "/v1/locks", msg: "request failed" })]);
    const atDebug = await logged("debug");
    expect(atDebug.map((l) => [l.reqId, l.level, l.statusCode])).toEqual([
      ["req-ok", 20, 200],
      ["req-refused", 30, 401],
    ]);
  });

  it("serves /metrics only to a scraper with METRICS_TOKEN, and says how to get in", async () => {
    for (const headers of [{}, { authorization: "Bearer not-the-metrics-token" }, { authorization: `Bearer ${token}` }] as Record<string, string>[]) {
      const refused = await fetch(`${api.url}/metrics`, { headers });
      expect(refused.status).toBe(401);
      const body = (await refused.json()) as { type: string; detail: string };
      expect(body.type).toBe("https://leasewatch.dev/problems/unauthorized");
      expect(body.detail).toMatch(/METRICS_TOKEN/);
    }
  });

  it("serves health, readiness and metrics by route and status", async () => {
    expect((await api.call(null, "GET", "/healthz")).status).toBe(200);
    expect((await api.call(null, "GET", "/livez")).status).toBe(200);
    const ready = await api.call(null, "GET", "/readyz");
    expect(ready.body).toMatchObject({ ready: true, tokens: true });
    const metrics = await (await fetch(`${api.url}/metrics`, { headers: { authorization: `Bearer ${api.metricsToken}` } })).text();
    expect(metrics).toMatch(/leasewatch_api_requests_total\{method="GET",route="\/v1\/locks",status="200"\} [1-9]/);
  });
});


/** Starts a waiting acquire on its own socket; the returned function closes that socket (the client going away). */
function startWaiter(bearer: string, body: Record<string, unknown>): () => void {
  const url = new URL(`${api.url}/v1/locks/acquire`);
  const data = JSON.stringify(body);
  const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: "POST", agent: false, headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json", "content-length": Buffer.byteLength(data) } });
  req.on("error", () => undefined);
  req.end(data);
  return () => req.destroy();
}

describe("waiting, disconnects and concurrency", () => {
  it("a client that disconnects cancels its wait: it never takes the lock afterwards", async () => {
    const r = res("gone");
    const held = await api.call(token, "POST", "/v1/locks/acquire", { resource: r, ownerId: "w1", task: "t", ttlMs: 10_000 });
    const disconnect = startWaiter(token, { resource: r, ownerId: "w2", task: "t", ttlMs: 10_000, waitMs: 20_000 });
    // The waiter has been refused at least once (a contended event) before it goes away.
    const store = api.storeByName(api.pg.spec.name);
    for (let i = 0; i < 100 && (await collectEvents(store, { resource: r, kinds: ["contended"] })).length === 0; i++) await sleep(50);
    disconnect();
    await api.call(token, "DELETE", `/v1/locks/${String(held.body.leaseId)}`);
    // Longer than the backoff cap (1 s): a waiter still running would have taken it by now.
    await sleep(1_500);
    expect(await store.get(r)).toBeNull();
  });

  it("a lease granted while the waiting client went away is released at once, not left to its TTL", async () => {
    // maxConcurrent 1: the waiter holds the token's one slot until the server sees its socket close.
    const narrow = await api.createToken({ prefixes: ["gone:"], maxConcurrent: 1 });
    const r = `gone:${randomUUID().slice(0, 8)}`;
    const store = api.storeByName(api.pg.spec.name);
    const held = await store.acquire({ resource: r, owner: "w1", task: "t", ttlMs: 30_000 });
    if (!held.acquired) throw new Error("expected a grant");
    const disconnect = startWaiter(narrow, { resource: r, ownerId: "w2", task: "t", ttlMs: 30_000, waitMs: 20_000 });
    let refused: LeaseEvent[] = [];
    for (let i = 0; i < 100 && refused.length === 0; i++) {
      refused = await collectEvents(store, { resource: r, kinds: ["contended"] });
      if (refused.length === 0) await sleep(50);
    }
    const waiter = refused[0]!.owner!;
    // The waiter's next attempt finds the resource free and stops inside its insert: the grant is out.
    const spec = api.pg.spec;
    if (spec.kind !== "postgres") throw new Error("expected the Postgres store");
    const raw = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
    onTestFinished(() => raw.end());
    const stall = await stallInsertsBy(raw, spec.schema, waiter, 0x4c57_0031);
    await store.release({ resource: r, leaseId: held.lease.leaseId });
    let isStalled = false;
    for (let i = 0; i < 200 && !isStalled; i++) {
      const { rows } = await raw.query(
        "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'advisory' AND datname = current_database() AND position($1 IN query) > 0",
        [`"${spec.schema}".lease_acquire(`],
      );
      isStalled = rows.length > 0;
      if (!isStalled) await sleep(25);
    }
    expect(isStalled, "the waiter's acquire should be waiting inside its insert").toBe(true);
    disconnect();
    // The server has seen the socket close once the token's slot is free again.
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await api.call(narrow, "GET", "/v1/locks")).status;
      if (status !== 200) await sleep(50);
    }
    expect(status).toBe(200);
    await stall.open();
    // The stalled grant commits, then the server gives it back; until the grant commits the resource reads free too.
    let history: LeaseEvent[] = [];
    for (let i = 0; i < 100 && history.length < 4; i++) {
      history = await collectEvents(store, { resource: r, kinds: ["acquired", "released"] });
      if (history.length < 4) await sleep(50);
    }
    expect(await store.get(r)).toBeNull();
    expect(history.map((e) => [e.kind, e.owner])).toEqual([
      ["acquired", "w1"],
      ["released", "w1"],
      ["acquired", waiter],
      ["released", waiter],
    ]);
  });

  it("limits requests in flight per token with 429 and Retry-After", async () => {
    const narrow = await api.createToken({ prefixes: ["narrow:"], maxConcurrent: 1 });
    const r = `narrow:${randomUUID().slice(0, 8)}`;
    const held = await api.call(narrow, "POST", "/v1/locks/acquire", { resource: r, ownerId: "w1", task: "t", ttlMs: 10_000 });
    const waiting = api.call(narrow, "POST", "/v1/locks/acquire", { resource: r, ownerId: "w2", task: "t", ttlMs: 10_000, waitMs: 30_000 });
    const store = api.storeByName(api.pg.spec.name);
    for (let i = 0; i < 100 && (await collectEvents(store, { resource: r, kinds: ["contended"] })).length === 0; i++) await sleep(50);
    const refused = await api.call(narrow, "GET", "/v1/locks");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    // The other tenant is unaffected.
    expect((await api.call(token, "GET", "/v1/locks")).status).toBe(200);
    await api.pg.store.release({ resource: r, leaseId: (await store.get(r))!.leaseId });
    const got = await waiting;
    expect(got.body.acquired).toBe(true);
    expect((await api.call(narrow, "DELETE", `/v1/locks/${String(got.body.leaseId)}`)).status).toBe(200);
    void held;
  });
});

describe("slots after a disconnect", () => {
  it("gives the concurrency slot back when a waiting client disconnects", async () => {
    const narrow = await api.createToken({ prefixes: ["slot:"], maxConcurrent: 1 });
    const r = `slot:${randomUUID().slice(0, 8)}`;
    await api.call(narrow, "POST", "/v1/locks/acquire", { resource: r, ownerId: "w1", task: "t", ttlMs: 10_000 });
    const disconnect = startWaiter(narrow, { resource: r, ownerId: "w2", task: "t", ttlMs: 10_000, waitMs: 30_000 });
    const store = api.storeByName(api.pg.spec.name);
    for (let i = 0; i < 100 && (await collectEvents(store, { resource: r, kinds: ["contended"] })).length === 0; i++) await sleep(50);
    disconnect();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      await sleep(100);
      status = (await api.call(narrow, "GET", "/v1/locks")).status;
    }
    expect(status).toBe(200);
  });
});
