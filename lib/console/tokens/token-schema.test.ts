import { describe, expect, it } from "vitest";
import { parseCreateTokenForm, ZRevokeTokenForm } from "./token-schema";

const STORES = ["pg-main", "redis-main"];
const NOW = Date.parse("2026-11-26T12:00:00Z");
const GOOD = { name: "billing-workers", prefixes: ["tenant_1:"], stores: ["pg-main"], actions: ["acquire", "release"], expiresInDays: 30 };

function issuesOf(body: unknown) {
  const parsed = parseCreateTokenForm(body, STORES, NOW);
  if (parsed.ok) throw new Error("expected issues");
  return parsed.issues;
}

describe("parseCreateTokenForm", () => {
  it("turns a good form into the token to store, expiring that many days from now", () => {
    const parsed = parseCreateTokenForm(GOOD, STORES, NOW);
    expect(parsed).toEqual({
      ok: true,
      token: { name: "billing-workers", prefixes: ["tenant_1:"], stores: ["pg-main"], actions: ["acquire", "release"], expiresAt: new Date("2026-12-26T12:00:00Z") },
    });
  });

  it("refuses an expiry beyond a year, or under a day, saying the bound", () => {
    expect(issuesOf({ ...GOOD, expiresInDays: 366 })).toEqual([{ field: "expiresInDays", message: "a token may live at most 365 days; create a new one to rotate" }]);
    expect(issuesOf({ ...GOOD, expiresInDays: 0 })[0]?.message).toBe("a token must live at least 1 day");
    expect(issuesOf({ ...GOOD, expiresInDays: 1.5 })[0]?.message).toBe("expiresInDays must be whole days");
  });

  it("refuses a store this console does not have, naming the ones it has", () => {
    expect(issuesOf({ ...GOOD, stores: ["pg-main", "pg-elsewhere"] })).toEqual([
      { field: "stores", message: 'this console has no store called "pg-elsewhere" (it has pg-main, redis-main)' },
    ]);
  });

  it("refuses empty or malformed scope with a message per field", () => {
    const issues = issuesOf({ name: "has space", prefixes: [], stores: [], actions: ["delete"], expiresInDays: 30 });
    expect(issues.map((i) => i.field)).toEqual(["name", "prefixes", "stores", "actions.0"]);
    expect(issues.find((i) => i.field === "prefixes")?.message).toBe("give at least one tenant prefix, e.g. tenant_123:");
    expect(issuesOf({ ...GOOD, prefixes: ["tenant 1:"] })[0]).toEqual({ field: "prefixes.0", message: "a prefix must be printable ASCII without spaces" });
    expect(issuesOf({ ...GOOD, prefixes: ["a:", "a:"] })[0]?.message).toBe("a prefix is listed twice");
  });

  it("refuses a body that is not the form: not an object, or with fields it does not know", () => {
    expect(issuesOf(undefined)).toEqual([{ field: "body", message: "the body must be a JSON object: { name, prefixes, stores, actions, expiresInDays }" }]);
    // A creator or a hash in the body would be a forgery: the server sets the creator, the hash is never chosen.
    expect(issuesOf({ ...GOOD, createdBy: "someone-else" })[0]?.field).toBe("body");
  });
});

describe("ZRevokeTokenForm", () => {
  it("takes a token id only", () => {
    expect(ZRevokeTokenForm.safeParse({ id: "5b0c1a4e-2f0e-4c43-9a57-0e1b2f3c4d5e" }).success).toBe(true);
    expect(ZRevokeTokenForm.safeParse({ id: "billing" }).error?.issues[0]?.message).toBe("id must be a token id (a UUID)");
  });
});
