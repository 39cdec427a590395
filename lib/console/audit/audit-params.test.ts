import { describe, expect, it } from "vitest";
import { parseAuditParams } from "@/lib/console/shared/params";

const NOW = Date.parse("2026-11-26T06:00:00Z");

describe("parseAuditParams", () => {
  it("reads the filters the /audit page puts in the URL", () => {
    const parsed = parseAuditParams({ actor: "alice@example.test", prefix: "tenant_1:", outcome: "lease_changed", window: "1h", entry: "42" }, NOW);
    if (!parsed.ok) throw new Error(parsed.problem.message);
    expect(parsed.params).toMatchObject({ actor: "alice@example.test", prefix: "tenant_1:", outcome: "lease_changed", entry: "42", limit: 50 });
    expect(parsed.params.range?.from.toISOString()).toBe("2026-11-26T05:00:00.000Z");
  });

  it("names the parameter that is wrong", () => {
    const problem = (input: Record<string, string>) => {
      const parsed = parseAuditParams(input, NOW);
      return parsed.ok ? null : parsed.problem.param;
    };
    expect(problem({ outcome: "deleted" })).toBe("outcome");
    expect(problem({ entry: "1; drop table" })).toBe("entry");
    expect(problem({ from: "yesterday" })).toBe("from");
    expect(problem({ limit: "5000" })).toBe("limit");
  });
});
