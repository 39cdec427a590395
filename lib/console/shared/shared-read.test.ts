import { describe, expect, it } from "vitest";
import { sleep } from "@leasewatch/lease/testing";
import { createSharedReads } from "./shared-read";

describe("createSharedReads", () => {
  it("gives identical concurrent requests one read, and different keys their own", async () => {
    const shared = createSharedReads({ ttlMs: 60_000 });
    let reads = 0;
    const read = async () => {
      reads += 1;
      await sleep(20);
      return { n: reads };
    };
    const [a, b, c] = await Promise.all([shared.share("x", read), shared.share("x", read), shared.share("y", read)]);
    expect(a).toBe(b);
    expect(c).not.toBe(a);
    expect(reads).toBe(2);
    // Shortly after: still the same answer.
    expect(await shared.share("x", read)).toBe(a);
    expect(reads).toBe(2);
  });

  it("reads again once the answer is older than the ttl", async () => {
    const shared = createSharedReads({ ttlMs: 30 });
    let reads = 0;
    const read = async () => ++reads;
    expect(await shared.share("x", read)).toBe(1);
    await sleep(80);
    expect(await shared.share("x", read)).toBe(2);
  });

  it("never serves a failed read to the next caller", async () => {
    const shared = createSharedReads({ ttlMs: 60_000 });
    await expect(shared.share("x", () => Promise.reject(new Error("store down")))).rejects.toThrow("store down");
    expect(shared.size()).toBe(0);
    expect(await shared.share("x", async () => "ok")).toBe("ok");
  });

  it("keeps at most maxKeys entries", async () => {
    const shared = createSharedReads({ ttlMs: 60_000, maxKeys: 3 });
    for (const key of ["a", "b", "c", "d", "e"]) await shared.share(key, async () => key);
    expect(shared.size()).toBe(3);
  });
});
