import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditDraft } from "@/lib/audit/entry";
import { AuditQueryError, csvCell, listAuditEntries, streamAuditEntries } from "@/lib/audit/read";
import { ALICE, createAuditFixture, type AuditFixture } from "@/test/support/audit";

const draft = (over: Partial<AuditDraft>): AuditDraft => ({
  requestId: "req", actorSub: ALICE.id, actorEmail: ALICE.email, actorRoles: ALICE.roles, action: "force_release", store: "pg-main",
  resource: "tenant_1:billing:a", leaseId: "lease", owner: "w", task: "t", fencingToken: "1", reason: "reason for the test",
  outcome: "released", newHolder: null, ip: null, userAgent: null, resolvesId: null, detail: null, ...over,
});

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

describe("reading the audit log", () => {
  let audit: AuditFixture;
  beforeAll(async () => {
    audit = await createAuditFixture();
    await audit.log.append(draft({ resource: "tenant_1:billing:a" }));
    await audit.log.append(draft({ resource: "tenant_1:billing:b", outcome: "denied_role", actorSub: "sub-bob", actorEmail: "bob@example.test" }));
    await audit.log.append(draft({ resource: "tenant_10:x", outcome: "lease_changed" }));
    await audit.log.append(draft({ resource: "tenant_1%:odd", reason: '=HYPERLINK("http://evil"), "quoted"' }));
    await audit.log.append(draft({ resource: "tenant_2:y", store: "redis-main" }));
  });
  afterAll(async () => {
    await audit?.cleanup();
  });

  it("keeps a scoped reader to entries for resources under their prefixes, in lists and exports", async () => {
    const res = (items: { resource: string }[]) => items.map((e) => e.resource);
    expect(res((await listAuditEntries({ scopePrefixes: ["tenant_1:"], limit: 10 }, audit.log)).items)).toEqual(["tenant_1:billing:b", "tenant_1:billing:a"]);
    expect(res((await listAuditEntries({ scopePrefixes: ["tenant_1:", "tenant_2:"], limit: 10 }, audit.log)).items)).toEqual([
      "tenant_2:y",
      "tenant_1:billing:b",
      "tenant_1:billing:a",
    ]);
    // A filter outside the scope finds nothing, rather than widening it.
    expect((await listAuditEntries({ scopePrefixes: ["tenant_1:"], prefix: "tenant_2:", limit: 10 }, audit.log)).items).toEqual([]);
    expect((await listAuditEntries({ scopePrefixes: ["tenant_1:"], resource: "tenant_2:y", limit: 10 }, audit.log)).items).toEqual([]);
    expect((await listAuditEntries({ scopePrefixes: [], limit: 10 }, audit.log)).items).toEqual([]);
    const csv = await readAll(streamAuditEntries({ scopePrefixes: ["tenant_1:"] }, "csv", audit.log));
    expect(csv).toContain("tenant_1:billing:a");
    expect(csv).not.toContain("tenant_2");
    expect(csv).not.toContain("tenant_10");
    const json = JSON.parse(await readAll(streamAuditEntries({ scopePrefixes: ["tenant_2:"] }, "json", audit.log))) as Array<{ resource: string }>;
    expect(json.map((e) => e.resource)).toEqual(["tenant_2:y"]);
  });

  it("filters by actor, resource prefix, outcome, store and time, newest first", async () => {
    const res = (items: { resource: string }[]) => items.map((e) => e.resource);
    expect(res((await listAuditEntries({ prefix: "tenant_1:", limit: 10 }, audit.log)).items)).toEqual(["tenant_1:billing:b", "tenant_1:billing:a"]);
    // LIKE metacharacters in a prefix are literal.
    expect(res((await listAuditEntries({ prefix: "tenant_1%", limit: 10 }, audit.log)).items)).toEqual(["tenant_1%:odd"]);
    expect(res((await listAuditEntries({ actor: "bob@example.test", limit: 10 }, audit.log)).items)).toEqual(["tenant_1:billing:b"]);
    expect(res((await listAuditEntries({ actor: "sub-bob", limit: 10 }, audit.log)).items)).toEqual(["tenant_1:billing:b"]);
    expect(res((await listAuditEntries({ outcome: "lease_changed", limit: 10 }, audit.log)).items)).toEqual(["tenant_10:x"]);
    expect(res((await listAuditEntries({ store: "redis-main", limit: 10 }, audit.log)).items)).toEqual(["tenant_2:y"]);
    expect((await listAuditEntries({ from: new Date(Date.now() + 60_000), limit: 10 }, audit.log)).items).toEqual([]);
    expect((await listAuditEntries({ to: new Date(Date.now() + 60_000), limit: 10 }, audit.log)).items).toHaveLength(5);
  });

  it("pages with a cursor: every entry exactly once", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listAuditEntries({ limit: 2, ...(cursor ? { cursor } : {}) }, audit.log);
      seen.push(...page.items.map((e) => e.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
  });

  it("refuses filters it cannot serve with a message fit for a 400", async () => {
    await expect(listAuditEntries({ outcome: "bogus", limit: 10 }, audit.log)).rejects.toThrow(AuditQueryError);
    await expect(listAuditEntries({ limit: 5000 }, audit.log)).rejects.toThrow(/limit must be between 1 and 1000/);
    await expect(listAuditEntries({ limit: 10, cursor: "garbage" }, audit.log)).rejects.toThrow(/cursor is not valid/);
    expect(() => streamAuditEntries({ outcome: "bogus" }, "csv", audit.log)).toThrow(AuditQueryError);
  });

  it("exports CSV with spreadsheet formulas defused, and JSON", async () => {
    const csv = await readAll(streamAuditEntries({ prefix: "tenant_1%" }, "csv", audit.log));
    const lines = csv.trimEnd().split("\r\n");
    expect(lines[0]).toMatch(/^id,at,requestId,actorSub/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`"'=HYPERLINK(""http://evil""), ""quoted"""`);
    const json = JSON.parse(await readAll(streamAuditEntries({}, "json", audit.log))) as Array<{ resource: string; hash: string }>;
    expect(json).toHaveLength(5);
    expect(json[0]!.resource).toBe("tenant_2:y");
    expect(csvCell("-1")).toBe("'-1");
  });

  it("defuses a formula hidden behind leading whitespace or a line break", () => {
    for (const value of ["\n=HYPERLINK(1)", " =1+1", "  +1", "\t@SUM(A1)", "\r-1", "\r\n=1", " \n @x"]) {
      const cell = csvCell(value);
      // Quoted or not, the text a spreadsheet reads starts with an apostrophe.
      expect(cell.replace(/^"/, "").startsWith("'")).toBe(true);
    }
    expect(csvCell(" plain text")).toBe(" plain text");
    expect(csvCell("a = b")).toBe("a = b");
  });
});

describe("exporting a large audit log", () => {
  let audit: AuditFixture;
  const N = 100_000;
  beforeAll(async () => {
    audit = await createAuditFixture();
    // Bulk rows straight in (the export does not check the chain; audit:verify does).
    await audit.admin.query(
      `INSERT INTO "${audit.schema}".audit_log (at, actor_sub, actor_roles, action, store, resource, outcome, prev_hash, hash)
       SELECT now() - g * interval '1 second', 'sub-' || (g % 7), '{operator}', 'force_release', 'pg-main', 'tenant_' || (g % 50) || ':job', 
              CASE WHEN g % 3 = 0 THEN 'released' ELSE 'denied_role' END, md5(g::text), md5(g::text) || md5((g + 1)::text)
       FROM generate_series(1, $1::int) g`,
      [N],
    );
  });
  afterAll(async () => {
    await audit?.cleanup();
  });

  it(`streams all ${N} entries as CSV and JSON in batches`, async () => {
    const csv = await readAll(streamAuditEntries({}, "csv", audit.log));
    expect(csv.split("\r\n").length - 2).toBe(N);
    const json = JSON.parse(await readAll(streamAuditEntries({ outcome: "released" }, "json", audit.log))) as unknown[];
    expect(json).toHaveLength(Math.floor(N / 3));
  });
});

describe("API token entries and a scoped reader", () => {
  let audit: AuditFixture;
  beforeAll(async () => {
    audit = await createAuditFixture();
    await audit.log.append(draft({ resource: "tenant_1:billing:a" }));
    // A token named like a scope prefix: its entry is about a token (of tenant_2), not about a tenant_1 lease.
    const token = { action: "token_create", store: "", leaseId: null, owner: null, task: null, fencingToken: null, reason: null, outcome: "created" } as const;
    await audit.log.append(draft({ ...token, resource: "tenant_1-lookalike", detail: "prefixes tenant_2:" }));
  });
  afterAll(async () => {
    await audit?.cleanup();
  });

  it("are left out for a scoped reader, whatever the token's name, and kept for an unscoped one", async () => {
    const scoped = await listAuditEntries({ scopePrefixes: ["tenant_1"], limit: 10 }, audit.log);
    expect(scoped.items.map((e) => [e.action, e.resource])).toEqual([["force_release", "tenant_1:billing:a"]]);
    const csv = await readAll(streamAuditEntries({ scopePrefixes: ["tenant_1"] }, "csv", audit.log));
    expect(csv).not.toContain("tenant_1-lookalike");
    expect((await listAuditEntries({ limit: 10 }, audit.log)).items.map((e) => e.resource)).toEqual(["tenant_1-lookalike", "tenant_1:billing:a"]);
  });
});
