import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { LeaseError } from "./errors";
import { createFencedTable, fencedWrite, readFencedHistory } from "./fencing";
import { freshPgSchema, TEST_DATABASE_URL, type FreshPgSchema } from "./testing/isolation";

/** Fenced downstream on the shared Postgres, in a schema of its own per test. */
let pool: pg.Pool;
let schema: FreshPgSchema;
let table: string;

beforeAll(() => {
  pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 8 });
  pool.on("error", () => undefined);
});
afterAll(async () => {
  await pool.end();
});
beforeEach(async () => {
  schema = freshPgSchema();
  await pool.query(`CREATE SCHEMA "${schema.schema}"`);
  table = `${schema.schema}.ledger`;
});
afterEach(async () => {
  await schema.drop();
});

const base = { resource: "tenant_1:ledger", by: "ledger-db", key: "tenant_1" };

describe("fenced writes", () => {
  it("creates the table once (idempotent)", async () => {
    expect(await createFencedTable({ pool, table })).toEqual({ table, created: true });
    expect(await createFencedTable({ pool, table })).toEqual({ table, created: false });
  });

  it("accepts fresh and equal tokens, refuses older ones with the token it has seen", async () => {
    await createFencedTable({ pool, table, history: true });
    expect(await fencedWrite({ ...base, pool, table, history: true, value: { n: 1 }, fencingToken: "10" })).toEqual({ accepted: true, fencingToken: "10" });
    expect(await fencedWrite({ ...base, pool, table, history: true, value: { n: 2 }, fencingToken: "10" })).toEqual({ accepted: true, fencingToken: "10" });
    expect(await fencedWrite({ ...base, pool, table, history: true, value: { n: 3 }, fencingToken: "12" })).toEqual({ accepted: true, fencingToken: "12" });
    expect(await fencedWrite({ ...base, pool, table, history: true, value: { n: 4 }, fencingToken: "11" })).toEqual({ accepted: false, seenToken: "12" });
    // Other keys are independent.
    expect((await fencedWrite({ ...base, pool, table, history: true, key: "tenant_2", value: 1, fencingToken: "1" })).accepted).toBe(true);

    const { rows } = await pool.query(`SELECT value, fencing_token::text AS token FROM ${table} WHERE key = $1`, ["tenant_1"]);
    expect(rows).toEqual([{ value: { n: 3 }, token: "12" }]);
    const history = await readFencedHistory({ pool, table });
    expect(history.map((h) => [h.key, h.fencingToken])).toEqual([
      ["tenant_1", "10"],
      ["tenant_1", "10"],
      ["tenant_1", "12"],
      ["tenant_2", "1"],
    ]);
  });

  it("compares tokens as numbers, beyond 2^53", async () => {
    await createFencedTable({ pool, table });
    expect((await fencedWrite({ ...base, pool, table, value: 1, fencingToken: "9007199254740993" })).accepted).toBe(true);
    expect(await fencedWrite({ ...base, pool, table, value: 1, fencingToken: "9007199254740992" })).toEqual({
      accepted: false,
      seenToken: "9007199254740993",
    });
    expect((await fencedWrite({ ...base, pool, table, value: 1, fencingToken: "10000000000000000" })).accepted).toBe(true);
  });

  it("concurrent writers: the accepted tokens never go backwards and the newest wins", async () => {
    await createFencedTable({ pool, table, history: true });
    const tokens = Array.from({ length: 60 }, (_, i) => String(1 + ((i * 37) % 60)));
    const results = await Promise.all(tokens.map((t) => fencedWrite({ ...base, pool, table, history: true, value: { t }, fencingToken: t })));
    const history = await readFencedHistory({ pool, table });
    expect(history.length).toBe(results.filter((r) => r.accepted).length);
    for (let i = 1; i < history.length; i++) {
      expect(BigInt(history[i]!.fencingToken) >= BigInt(history[i - 1]!.fencingToken)).toBe(true);
    }
    expect(history.at(-1)?.fencingToken).toBe("60");
    for (const r of results) if (!r.accepted) expect(BigInt(r.seenToken) > 0n).toBe(true);
  });

  it("a write refused by a row that committed while it waited reports the token that won", async () => {
    await createFencedTable({ pool, table, history: true });
    // Two shapes of the race: the key is new, or it already holds an older token.
    for (const [key, initial] of [["fresh", null], ["existing", "5"]] as const) {
      if (initial) expect((await fencedWrite({ ...base, pool, table, history: true, key, value: 0, fencingToken: initial })).accepted).toBe(true);
      const newer = await pool.connect();
      try {
        await newer.query("BEGIN");
        expect((await fencedWrite({ ...base, pool: newer, table, history: true, key, value: 20, fencingToken: "20" })).accepted).toBe(true);
        // The older write starts (and takes its snapshot) while the newer one is uncommitted, then waits on the row.
        const older = fencedWrite({ ...base, pool, table, history: true, key, value: 10, fencingToken: "10" });
        for (let i = 0; i < 200; i++) {
          const { rows } = await pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`,
            [schema.schema],
          );
          if (rows[0]!.n > 0) break;
          await new Promise((r) => setTimeout(r, 10));
        }
        await newer.query("COMMIT");
        expect(await older).toEqual({ accepted: false, seenToken: "20" });
      } finally {
        newer.release();
      }
    }
    const history = await readFencedHistory({ pool, table });
    expect(history.map((h) => [h.key, h.fencingToken])).toEqual([
      ["fresh", "20"],
      ["existing", "5"],
      ["existing", "20"],
    ]);
  });

  it("bad input throws LeaseError and writes nothing", async () => {
    await createFencedTable({ pool, table });
    const bad: Array<Record<string, unknown>> = [
      { table: 'ledger"; DROP TABLE x; --' },
      { table: "Ledger" },
      { fencingToken: "-1" },
      { fencingToken: "1e5" },
      { fencingToken: "9223372036854775808" },
      { key: "" },
      { resource: "" },
      { value: () => 1 },
      { extra: true },
      // What the store or Postgres would refuse later must be refused before anything is sent.
      { by: " ledger-db" },
      { by: "ledger-db " },
      { key: "tenant\u0000x" },
      { value: { note: "a\u0000b" } },
      { value: { "a\u0000": 1 } },
      { value: ["\udc00"] },
    ];
    for (const patch of bad) {
      await expect(fencedWrite({ ...base, pool, table, value: 1, fencingToken: "5", ...patch } as never)).rejects.toBeInstanceOf(LeaseError);
    }
    await expect(createFencedTable({ pool, table: "a.b.c" })).rejects.toBeInstanceOf(LeaseError);
    await expect(readFencedHistory({ pool, table, limit: 5 } as never)).rejects.toThrow(/unknown option.*limit/);
    expect((await pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(0);
  });
});

describe.each(["postgres", "redis"] as const)("fencing rejection recorded on the %s store", (kind) => {
  let fixture: StoreFixture;
  beforeEach(async () => {
    fixture = await createStoreFixture(kind);
  });
  afterEach(async () => {
    await fixture.cleanup();
  });

  it("a refused write records fencing_rejected with both tokens", async () => {
    const { store } = fixture;
    await createFencedTable({ pool, table });
    const resource = "tenant_9:ledger";
    const old = await store.acquire({ resource, owner: "w-old", task: "t", ttlMs: 100 });
    if (!old.acquired) throw new Error("first acquire must succeed");
    await new Promise((r) => setTimeout(r, 150));
    const next = await store.acquire({ resource, owner: "w-new", task: "t", ttlMs: 5_000 });
    if (!next.acquired) throw new Error("takeover after expiry must succeed");
    expect(BigInt(next.lease.fencingToken) > BigInt(old.lease.fencingToken)).toBe(true);

    const write = (token: string, owner: string) =>
      fencedWrite({ pool, table, key: resource, value: { owner }, fencingToken: token, resource, store, by: "ledger-db", owner, task: "t" });
    expect((await write(next.lease.fencingToken, "w-new")).accepted).toBe(true);
    const stale = await write(old.lease.fencingToken, "w-old");
    expect(stale).toMatchObject({ accepted: false, seenToken: next.lease.fencingToken });
    if (stale.accepted) return;
    expect(stale.event).toMatchObject({ kind: "fencing_rejected", resource, fencingToken: old.lease.fencingToken });

    const events = await store.events({ resource, kinds: ["fencing_rejected"] });
    expect(events.items).toHaveLength(1);
    expect(events.items[0]).toMatchObject({ kind: "fencing_rejected", fencingToken: old.lease.fencingToken });
  });
});
