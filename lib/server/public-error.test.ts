import { describe, expect, it } from "vitest";
import { LeaseError, ReadAbortedError } from "@leasewatch/lease";
import { captureLogs } from "@/lib/log/testing";
import { toPublicStoreError } from "./public-error";

describe("toPublicStoreError", () => {
  it("gives the browser a short reason and a reference, and logs the driver's message under it", () => {
    const log = captureLogs();
    try {
      const refused = Object.assign(new Error("connect ECONNREFUSED 10.1.2.3:6380"), { code: "ECONNREFUSED" });
      const shown = toPublicStoreError(refused, "redis-main");
      expect(shown).toMatch(/^unreachable \(ref [0-9a-f]{8}\)$/);
      expect(shown).not.toContain("10.1.2.3");
      const ref = /ref ([0-9a-f]{8})/.exec(shown)![1]!;
      expect(log.lines).toContainEqual(expect.objectContaining({ level: "error", store: "redis-main", detail: "Error: connect ECONNREFUSED 10.1.2.3:6380", ref }));

      const auth = Object.assign(new Error('password authentication failed for user "leasewatch_console"'), { code: "28P01" });
      expect(toPublicStoreError(auth, "pg-main")).toMatch(/^refused the console's credentials \(ref /);
      expect(toPublicStoreError(new Error('relation "x" does not exist'), "pg-main")).toMatch(/^store error \(ref /);
      expect(toPublicStoreError(new Error('store "pg-main": no answer within 4000 ms'), "pg-main")).toMatch(/^no answer within 4000 ms \(ref /);
    } finally {
      log.restore();
    }
  });

  it("a read cancelled because its request went away is no store failure: no reference, no error line", () => {
    const log = captureLogs();
    try {
      const responseAborted = Object.assign(new Error(""), { name: "ResponseAborted" });
      for (const cancelled of [new ReadAbortedError('redis store "redis-main": events'), responseAborted, new DOMException("aborted", "AbortError")]) {
        expect(toPublicStoreError(cancelled, "redis-main")).toBe("read cancelled");
      }
      expect(log.lines.filter((line) => line.level === "error")).toEqual([]);
      // A timeout is still a failure, with its reference.
      expect(toPublicStoreError(new Error('store "redis-main": no answer within 4000 ms'), "redis-main")).toMatch(/^no answer within 4000 ms \(ref /);
      expect(log.lines.filter((line) => line.level === "error")).toHaveLength(1);
    } finally {
      log.restore();
    }
  });

  it("input the store refuses is the request's problem: said in the library's words, no reference, no error line", () => {
    const log = captureLogs();
    try {
      expect(toPublicStoreError(new LeaseError("list: cursor is not one this store issued"), "pg-main")).toBe("refused the request: list: cursor is not one this store issued");
      expect(log.lines.filter((line) => line.level === "error")).toEqual([]);
      expect(log.lines).toContainEqual(expect.objectContaining({ level: "info", store: "pg-main", detail: "list: cursor is not one this store issued" }));
      // Any other error of the library is still a store failure, with its reference.
      expect(toPublicStoreError(new LeaseError("redis list: unexpected reply", "store_error"), "redis-main")).toMatch(/^store error \(ref [0-9a-f]{8}\)$/);
    } finally {
      log.restore();
    }
  });

  it("logs a repeating failure once a minute, with the same reference", () => {
    const log = captureLogs();
    try {
      const error = new Error("connect ECONNREFUSED 127.0.0.1:1");
      const first = toPublicStoreError(error, "repeat-store");
      const second = toPublicStoreError(error, "repeat-store");
      expect(second).toBe(first);
      expect(log.lines).toHaveLength(1);
    } finally {
      log.restore();
    }
  });
});
