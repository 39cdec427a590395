import { describe, expect, it } from "vitest";
import { ZReason } from "./force-release-schema";

describe("the force-release reason", () => {
  it("takes several lines, however the browser ended them, and tabs", () => {
    for (const reason of ["holder stuck\nrestarting worker now", "holder stuck\r\nrestarting worker now", "holder stuck\trestarting"]) {
      expect(ZReason.safeParse(reason).success).toBe(true);
    }
  });

  it("refuses other control characters with a message to act on", () => {
    const parsed = ZReason.safeParse("holder stuck \u0000 restarting");
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toBe("reason must be printable text");
  });
});
