import { describe, expect, it } from "vitest";
import { describeEventDetail, eventDetailItems } from "./event-details";

const EXPIRED_AT = "2026-11-26T02:04:00.120Z";

describe("describeEventDetail", () => {
  it("words an expiry the same from either store's detail: ISO text (Postgres) or epoch ms text (Redis, before the codec)", () => {
    const fromPostgres = describeEventDetail({ kind: "expired", detail: { renewals: 3, expiredAt: "2026-11-26T02:04:00.120456+00:00", recordedBy: "sweep" } });
    const fromRedis = describeEventDetail({ kind: "expired", detail: { renewals: "3", expiredAt: String(Date.parse(EXPIRED_AT)), recordedBy: "sweep" } });
    expect(fromPostgres).toBe("expired at 02:04:00 UTC · recorded by sweep · 3 renewals");
    expect(fromRedis).toBe(fromPostgres);
  });

  it("says one renewal in the singular, none as none, and thousands with a separator", () => {
    expect(describeEventDetail({ kind: "released", detail: { renewals: 1 } })).toBe("1 renewal");
    expect(describeEventDetail({ kind: "released", detail: { renewals: 0 } })).toBe("no renewals");
    expect(describeEventDetail({ kind: "released", detail: { renewals: 12_345 } })).toBe("12,345 renewals");
  });

  it("never shows raw JSON for the keys the stores write", () => {
    const line = describeEventDetail({ kind: "expired", detail: { expiredAt: EXPIRED_AT, recordedBy: "force_release", renewals: 2 } });
    expect(line).toBe("expired at 02:04:00 UTC · recorded by force release · 2 renewals");
    expect(line).not.toMatch(/[{}"]/);
  });

  it("names the holder of a contended acquire and the token a downstream had seen", () => {
    expect(describeEventDetail({ kind: "contended", detail: { holderOwner: "w2", holderTask: "task-1" } })).toBe("held by w2 (task-1)");
    expect(describeEventDetail({ kind: "fencing_rejected", detail: { seenToken: "42", by: "ledger" } })).toBe("had seen token 42 · refused by ledger");
  });

  it("puts the reason of a failed renewal first, and leaves out a reason already in its own column", () => {
    expect(describeEventDetail({ kind: "renew_failed", reason: "not_owner" })).toBe("not_owner");
    expect(describeEventDetail({ kind: "force_released", reason: "stuck", detail: { reason: "stuck", renewals: 1 } })).toBe("1 renewal");
  });

  it("words keys it does not know as label and value, and returns null when there is nothing to say", () => {
    expect(describeEventDetail({ kind: "lost", reason: "deadline", detail: { lastRenewMs: 120, leaseId: "x" } })).toBe("deadline · last renew ms 120");
    expect(describeEventDetail({ kind: "acquired" })).toBeNull();
    expect(describeEventDetail({ kind: "acquired", detail: { leaseId: "not-a-uuid" } })).toBeNull();
  });
});

describe("eventDetailItems", () => {
  it("gives every field a label and a full value, times in absolute UTC", () => {
    const items = eventDetailItems({ kind: "expired", detail: { recordedBy: "acquire", renewals: 1, expiredAt: EXPIRED_AT, ttlMs: 1_500 } });
    expect(items.map(({ label, value }) => [label, value])).toEqual([
      ["Expired at", "2026-11-26 02:04:00.120 UTC"],
      ["Recorded by", "acquire"],
      ["Renewals", "1"],
      ["TTL", "1.5 s"],
    ]);
  });

  it("keeps a value it cannot read as a time rather than inventing one", () => {
    const items = eventDetailItems({ kind: "expired", detail: { expiredAt: "soon" } });
    expect(items).toEqual([{ key: "expiredAt", label: "Expired at", value: "soon", phrase: "expired at soon" }]);
  });
});
