/**
 * Random Unicode through every path that appends to the audit log, against
 * real Postgres (and a real Postgres lease store), with the chain verified after
 * each batch: every attempt is recorded and the chain stays intact, whatever
 * the text. The generator is seeded, so a failing batch names its seed to replay.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokenAudited, recordTokenRefusal, revokeTokenAudited, tokenRefusalDraft, type TokenAuditDeps } from "@/lib/audit/api-tokens";
import { forceReleaseAudited, recordRefusedAttempt, refusedAttemptDraft, resolvePendingForceReleases } from "@/lib/audit/force-release";
import { RefusalTally } from "@/lib/audit/refusal-tally";
import { verifyAuditChain } from "@/lib/audit/verify";
import { createRandom } from "@leasewatch/lease/testing";
import { captureLogs } from "@/lib/log/testing";
import { auditDeps, type AuditFixture, auditTargetInAuditDatabase, cleanupAuditedStore, createAuditedStore } from "@/test/support/audit";
import type { StoreFixture } from "@/test/support/stores";

// Pieces that have broken text handling somewhere: lone surrogates, NUL and other controls,
// line ends, bidi and zero-width marks, emoji (pairs, ZWJ sequences, flags), combining marks, CJK, noncharacters.
const PIECES = [
  "\ud800", "\udfff", "\udbff\udbff", "\u0000", "\u0001", "\u001b[31m", "\u007f", "\u0085", "\u009b", "\r", "\n", "\r\n", "\t", "  ", " ",
  "\u202e", "\u200f", "\u200d", "\ufeff", "\u2028", "😀", "👩‍👩‍👧‍👦", "🇺🇦", "e\u0301", "界", "한국어", "ﷺ", "\uffff", "\ufffd", "=cmd|'/c calc'!A0", "\"", "'", "\\", "%", "_",
  "plain words ", "a",
];
/** Byte limits the log clips at: an emoji placed across each must never be split. */
const LIMITS = [64, 128, 256, 1000, 1024, 2000];

function makeText(rand: () => number): string {
  const roll = rand();
  if (roll < 0.1) {
    // An emoji straddling a clip limit.
    const limit = LIMITS[Math.floor(rand() * LIMITS.length)]!;
    return `${"a".repeat(limit - 1 - Math.floor(rand() * 3))}${rand() < 0.5 ? "😀" : "👩‍👩‍👧‍👦"}tail`;
  }
  if (roll < 0.15) return Array.from({ length: 10_240 }, () => PIECES[Math.floor(rand() * PIECES.length)]!).join("").slice(0, 10_240);
  const n = 1 + Math.floor(rand() * 24);
  return Array.from({ length: n }, () => PIECES[Math.floor(rand() * PIECES.length)]!).join("");
}

const BATCHES = [1, 2, 3, 4];
const PER_PATH = 6;

describe("random Unicode through every audited path", () => {
  let pg: StoreFixture;
  let audit: AuditFixture;
  let tokenDeps: TokenAuditDeps;
  beforeAll(async () => {
    ({ store: pg, audit } = await createAuditedStore("postgres", { registerSchema: true }));
    tokenDeps = { getAuditLog: async () => audit.log, tokenDb: { url: audit.url, schema: audit.schema } };
  });
  afterAll(() => cleanupAuditedStore(audit, pg));
  const deps = () =>
    auditDeps(
      audit.log,
      { "pg-main": auditTargetInAuditDatabase("pg-main", pg) },
      0,
    );

  it.each(BATCHES)("batch with seed %i: every attempt is recorded and the chain verifies", async (seed) => {
    const rand = createRandom(seed);
    const text = () => makeText(rand);
    const actor = () => ({ id: text(), email: rand() < 0.3 ? null : text(), roles: [text(), "operator"] });
    const request = () => ({ requestId: text(), ip: rand() < 0.5 ? null : text(), userAgent: text() });
    const quiet = captureLogs();
    const written = { count: 0 };
    const before = Number((await audit.admin.query(`SELECT count(*)::int AS n FROM "${audit.schema}".audit_log`)).rows[0].n);
    try {
      for (let i = 0; i < PER_PATH; i++) {
        // Force-release refused (any refusal), with whatever the body held.
        const refused = await recordRefusedAttempt(
          { actor: actor(), store: rand() < 0.5 ? "pg-main" : text(), resource: text(), leaseId: text(), reason: text(), request: request(), outcome: "denied_role", detail: text() },
          deps(),
        );
        expect(refused, `seed ${seed}`).toHaveProperty("auditId");
        written.count++;

        // Force-release allowed: a held lease, a random reason (a short one is refused as input, and audited).
        const lease = await pg.store.acquire({ resource: `prop:${seed}:${i}`, owner: "w", task: "t", ttlMs: 60_000 });
        if (!lease.acquired) throw new Error("test setup: acquire failed");
        const reason = rand() < 0.8 ? `why: ${text()}` : text();
        const released = await forceReleaseAudited({ actor: actor(), store: "pg-main", resource: lease.lease.resource, leaseId: lease.lease.leaseId, reason, request: request() }, deps());
        expect(released.outcome, `seed ${seed}, reason ${JSON.stringify(reason).slice(0, 200)}`).not.toBe("audit_unavailable");
        written.count += released.outcome === "released" ? 2 : 1;

        // Token create (a valid name: the form allows no other), revoke by a random name, and a refused change.
        const name = `prop-${seed}-${i}`;
        const created = await createTokenAudited(
          { actor: actor(), request: request(), token: { name, prefixes: ["tenant_1:"], stores: ["pg-main"], actions: ["acquire"], expiresAt: new Date(Date.now() + 86_400_000) } },
          tokenDeps,
        );
        expect(created.outcome, `seed ${seed}`).toBe("created");
        const key = rand() < 0.5 ? (rand() < 0.5 ? { name } : { id: text() }) : { name: text() };
        const revoked = await revokeTokenAudited({ actor: actor(), request: request(), token: key }, tokenDeps);
        expect(revoked.outcome, `seed ${seed}`).not.toBe("audit_unavailable");
        const tokenRefused = await recordTokenRefusal({ actor: actor(), request: request(), action: rand() < 0.5 ? "token_create" : "token_revoke", name: text(), outcome: "invalid_input", detail: text() }, tokenDeps);
        expect(tokenRefused, `seed ${seed}`).toHaveProperty("auditId");
        written.count += 3;
      }

      // Rate-limited attempts, counted and written as one entry each per key.
      const tally = new RefusalTally({ windowMs: 3_600_000, getAuditLog: async () => audit.log });
      for (let i = 0; i < PER_PATH; i++) {
        const who = actor();
        tally.add(`fr\u0000${who.id}`, refusedAttemptDraft({ actor: who, store: text(), resource: text(), leaseId: text(), reason: text(), request: request(), outcome: "rate_limited", detail: text() }));
        tally.add(`tk\u0000${who.id}`, tokenRefusalDraft({ actor: who, request: request(), action: "token_create", name: text(), outcome: "rate_limited", detail: text() }));
      }
      const keys = tally.pending().size;
      await tally.flush();
      expect(tally.pending().size).toBe(0);
      written.count += keys;

      // A `requested` entry left open by a crash, resolved from the store's events.
      await resolvePendingForceReleases(deps());
    } finally {
      quiet.restore();
    }
    const after = Number((await audit.admin.query(`SELECT count(*)::int AS n FROM "${audit.schema}".audit_log`)).rows[0].n);
    expect(after - before, `seed ${seed}`).toBe(written.count);
    const verified = await verifyAuditChain({ pool: audit.admin, schema: audit.schema, key: audit.key });
    expect(verified, `seed ${seed}`).toMatchObject({ ok: true, failureCount: 0 });
  });
});
