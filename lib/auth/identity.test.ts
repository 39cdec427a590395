import { describe, expect, it } from "vitest";
import { identityId, identityLabel, subjectOfIdentity, verifiedEmailOf } from "./identity";

describe("identity", () => {
  it("takes the email only when the IdP says it verified it", () => {
    expect(verifiedEmailOf({ email: "a@example.test", email_verified: true })).toBe("a@example.test");
    expect(verifiedEmailOf({ email: "a@example.test", email_verified: "true" })).toBe("a@example.test");
    expect(verifiedEmailOf({ email: "a@example.test", email_verified: false })).toBeNull();
    expect(verifiedEmailOf({ email: "a@example.test" })).toBeNull();
    expect(verifiedEmailOf({ email: "a@example.test", email_verified: "false" })).toBeNull();
  });

  it("names a person by sub at issuer, reads the sub back, and tells older email actors apart", () => {
    const id = identityId("https://sso.example.test/realms/ops", "a#b");
    expect(id).toBe("https://sso.example.test/realms/ops#a#b");
    expect(subjectOfIdentity(id)).toBe("a#b");
    expect(subjectOfIdentity("alice@example.test")).toBeNull();
    expect(identityLabel({ id, email: null })).toBe("a#b");
    expect(identityLabel({ id, email: "a@example.test" })).toBe("a@example.test");
    expect(identityLabel({ id: "alice@example.test", email: "alice@example.test" })).toBe("alice@example.test");
  });
});
