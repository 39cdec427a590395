import { randomBytes } from "node:crypto";
import http from "node:http";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TokenStore, TOKEN_PREFIX } from "@/lib/api/tokens";
import { freshPgSchema, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { startApiFixture, type ApiFixture } from "@/test/support/api-server";

const randomBearer = () => TOKEN_PREFIX + randomBytes(32).toString("base64url");

/** GET from a chosen loopback address (127.0.0.0/8 is all local on Linux): the API sees a real socket address. */
function getFrom(api: ApiFixture, from: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Record<string, unknown> }> {
  const url = new URL(api.url + path);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, localAddress: from, agent: false, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text || "{}") as Record<string, unknown> }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("requests without a valid token", () => {
  let api: ApiFixture;
  let token: string;
  beforeAll(async () => {
    api = await startApiFixture({ trustProxy: (address) => address === "127.0.0.4" });
    token = await api.createToken({ prefixes: ["ten1:"] });
  });
  afterAll(() => api?.close());

  it("a flood of made-up bearers from one address gets 429 with Retry-After, while a valid token from another address still works", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await getFrom(api, "127.0.0.2", "/v1/locks", { authorization: `Bearer ${randomBearer()}` })).status);
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(30).every((s) => s === 429)).toBe(true);
    const limited = await getFrom(api, "127.0.0.2", "/v1/locks", { authorization: `Bearer ${randomBearer()}` });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    expect(limited.body.detail).toMatch(/Too many requests without a valid token from your address; retry in \d+ s/);
    // No bearer at all counts the same.
    expect((await getFrom(api, "127.0.0.2", "/v1/locks", {})).status).toBe(429);

    expect((await getFrom(api, "127.0.0.3", "/v1/locks", { authorization: `Bearer ${token}` })).status).toBe(200);
  });

  it("a forged X-Forwarded-For does not move a client to another address's budget; a trusted proxy's does", async () => {
    for (let i = 0; i < 30; i++) await getFrom(api, "127.0.0.5", "/v1/locks", { authorization: `Bearer ${randomBearer()}`, "x-forwarded-for": `198.51.100.${i}` });
    expect((await getFrom(api, "127.0.0.5", "/v1/locks", { authorization: `Bearer ${randomBearer()}`, "x-forwarded-for": "198.51.100.200" })).status).toBe(429);
    // Behind the trusted proxy each forwarded client has its own budget.
    for (let i = 0; i < 30; i++) await getFrom(api, "127.0.0.4", "/v1/locks", { authorization: `Bearer ${randomBearer()}`, "x-forwarded-for": "203.0.113.1" });
    expect((await getFrom(api, "127.0.0.4", "/v1/locks", { authorization: `Bearer ${randomBearer()}`, "x-forwarded-for": "203.0.113.1" })).status).toBe(429);
    expect((await getFrom(api, "127.0.0.4", "/v1/locks", { authorization: `Bearer ${randomBearer()}`, "x-forwarded-for": "203.0.113.2" })).status).toBe(401);
  });
});

describe("the token cache", () => {
  let pool: pg.Pool;
  let tokens: TokenStore;
  let schema: ReturnType<typeof freshPgSchema>;
  /** Lookups by token hash that reached Postgres. */
  let lookups = 0;

  beforeAll(async () => {
    schema = freshPgSchema(TEST_DATABASE_URL);
    pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 4 });
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      if (typeof args[0] === "string" && args[0].includes("WHERE token_hash")) lookups++;
      return query(...args);
    };
    tokens = new TokenStore({ schema: schema.schema, pool });
    await tokens.migrate();
  });
  afterAll(async () => {
    await tokens?.close();
    await pool?.end();
    await schema?.drop();
  });

  it("asks the database once for an unknown bearer repeated over a few seconds", async () => {
    const bearer = randomBearer();
    const before = lookups;
    const start = Date.now();
    for (const offsetMs of [0, 1_000, 2_000, 3_000, 4_000]) expect(await tokens.authenticate(bearer, start + offsetMs)).toBeNull();
    expect(lookups - before).toBe(1);
  });

  it("serves a token the console has just created at once", async () => {
    const console = new TokenStore({ schema: schema.schema, url: TEST_DATABASE_URL });
    try {
      expect(await tokens.authenticate(randomBearer())).toBeNull();
      const { token } = await console.create({ name: `fresh-${randomBytes(3).toString("hex")}`, prefixes: ["p:"], stores: ["pg-main"], actions: ["read"], expiresAt: new Date(Date.now() + 3_600_000), createdBy: "test" });
      expect((await tokens.authenticate(token))?.name).toMatch(/^fresh-/);
    } finally {
      await console.close();
    }
  });

  it("a flood of unknown bearers past the cache's size leaves a recently used live token cached", async () => {
    const { token } = await tokens.create({ name: `live-${randomBytes(3).toString("hex")}`, prefixes: ["p:"], stores: ["pg-main"], actions: ["read"], expiresAt: new Date(Date.now() + 3_600_000), createdBy: "test" });
    expect(await tokens.authenticate(token)).not.toBeNull();
    const cachedAt = Date.now();
    const bearers = Array.from({ length: 10_050 }, randomBearer);
    for (let i = 0; i < bearers.length; i += 50) await Promise.all(bearers.slice(i, i + 50).map((b) => tokens.authenticate(b)));
    // As of when it was cached: still in the cache, no database needed.
    expect(tokens.authenticateCached(token, cachedAt)?.name).toMatch(/^live-/);
  });
});
