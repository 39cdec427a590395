import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { freshPgSchema, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { openToken, resolveConsoleDbConfig, sealToken, SessionStore } from "./session-store";

const SECRET = "s".repeat(40);
const schema = freshPgSchema();
const stores: SessionStore[] = [];
const open = () => {
  const store = new SessionStore({ url: TEST_DATABASE_URL, schema: schema.schema, secret: SECRET });
  stores.push(store);
  return store;
};

afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await schema.drop();
});

describe("SessionStore", () => {
  it("migrates once when several console processes start together", async () => {
    await Promise.all([open().migrate(), open().migrate(), open().migrate()]);
    const pg = (await import("pg")).default;
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const ledger = await client.query(`SELECT version FROM "${schema.schema}".console_sessions_migrations`);
      expect(ledger.rows).toEqual([{ version: 1 }]);
    } finally {
      await client.end();
    }
  });

  it("records, reads and revokes a session; revoking twice reports the second as a no-op", async () => {
    const store = open();
    const id = randomUUID();
    const now = new Date();
    await store.create({
      id,
      subject: "alice",
      email: "alice@example.test",
      signedInAt: now,
      authTime: now,
      expiresAt: new Date(now.getTime() + 60_000),
      groups: ["leasewatch-operators"],
      accessToken: "at-1",
      accessTokenExpiresAt: new Date(now.getTime() + 30_000),
      refreshToken: "rt-1",
    });
    expect(await store.get(id)).toMatchObject({ subject: "alice", groups: ["leasewatch-operators"], accessToken: "at-1", refreshToken: "rt-1", revokedAt: null });
    await store.updateGroups(id, { groups: [], checkedAt: new Date(), tokens: { accessToken: "at-2", accessTokenExpiresAt: null, refreshToken: "rt-2" } });
    expect(await store.get(id)).toMatchObject({ groups: [], accessToken: "at-2", refreshToken: "rt-2" });
    expect(await store.revoke(id, "signed out")).toBe(true);
    expect(await store.revoke(id, "signed out")).toBe(false);
    const revoked = await store.get(id);
    expect(revoked?.revokedAt).toBeInstanceOf(Date);
    // Tokens of a revoked session are gone, not just marked.
    expect(revoked).toMatchObject({ accessToken: null, refreshToken: null });
  });

  it("seals tokens so that another secret cannot open them", () => {
    const sealed = sealToken("refresh-token-value", SECRET);
    expect(sealed).not.toContain("refresh-token-value");
    expect(openToken(sealed, SECRET)).toBe("refresh-token-value");
    expect(openToken(sealed, "t".repeat(40))).toBeNull();
    // Flip a bit of the ciphertext itself. (Editing the last base64 character is no test:
    // it may only touch padding bits, which decode to the very same bytes.)
    const [version, iv, tag, body] = sealed.split(".");
    const damaged = Buffer.from(body!, "base64url");
    damaged[0]! ^= 0x01;
    expect(openToken([version, iv, tag, damaged.toString("base64url")].join("."), SECRET)).toBeNull();
  });
});

describe("resolveConsoleDbConfig", () => {
  it("uses LEASEWATCH_AUDIT_URL, else the first Postgres store, in schema leasewatch_console by default", () => {
    expect(resolveConsoleDbConfig({ LEASEWATCH_AUDIT_URL: "postgres://audit@db/console" })).toEqual({ url: "postgres://audit@db/console", schema: "leasewatch_console" });
    const stores = JSON.stringify([
      { name: "r", kind: "redis", url: "redis://r" },
      { name: "p", kind: "postgres", url: "postgres://p@db/leases" },
    ]);
    expect(resolveConsoleDbConfig({ LEASEWATCH_STORES: stores, LEASEWATCH_CONSOLE_SCHEMA: "ops_console" })).toEqual({ url: "postgres://p@db/leases", schema: "ops_console" });
  });

  it("says what to set when there is no Postgres to keep sessions in, or the schema is not an identifier", () => {
    const redisOnly = JSON.stringify([{ name: "r", kind: "redis", url: "redis://r" }]);
    expect(() => resolveConsoleDbConfig({ LEASEWATCH_STORES: redisOnly })).toThrow(/set LEASEWATCH_AUDIT_URL/);
    expect(() => resolveConsoleDbConfig({ LEASEWATCH_AUDIT_URL: "postgres://x/y", LEASEWATCH_CONSOLE_SCHEMA: 'x"; drop' })).toThrow(/LEASEWATCH_CONSOLE_SCHEMA/);
  });
});
