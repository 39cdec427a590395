import { beforeAll, describe, expect, it } from "vitest";
import { setUpStoreFixture } from "@/test/support/store-suite";
import { type RawEvent, rawToStreamFields, streamEntryToRaw } from "./codec";
import { type BucketKeys, buildBucketKeys } from "./keys";
import type { RedisLeaseStore } from "./store";

/**
 * A bucket stream's entry is one field-value pair (the letters of the event's fields, then their
 * values): what the store writes, what every reader decodes, and what a stream written by an
 * earlier version (a pair per field) still reads as, beside new entries in the same stream.
 */
const fixture = setUpStoreFixture("redis", { name: "redis-entries", options: { buckets: 1 } });
let store: RedisLeaseStore;
let keys: BucketKeys;

beforeAll(() => {
  store = fixture.store;
  keys = buildBucketKeys(fixture.spec.namespace, 0);
});

async function entries(): Promise<[string, string[]][]> {
  return (await store.client.xrange(keys.events, "-", "+")) as [string, string[]][];
}

describe("the bucket stream's entries", () => {
  it("are written packed, one field-value pair an event, and read back as every field the event had", async () => {
    const before = (await entries()).length;
    const acquired = await store.acquire({ resource: "entries:packed", owner: "worker-ü", task: "nightly report", ttlMs: 60_000 });
    if (!acquired.acquired) throw new Error("expected to acquire");
    const released = await store.release({ resource: "entries:packed", leaseId: acquired.lease.leaseId });
    expect(released.released).toBe(true);

    const written = (await entries()).slice(before);
    expect(written.map(([, fields]) => fields.length)).toEqual([2, 2]);
    expect(written.map(([, fields]) => fields[0])).toEqual(["krlotn", "krlotnh"]);
    expect(streamEntryToRaw(written[0]!)).toEqual({
      id: written[0]![0],
      kind: "acquired",
      resource: "entries:packed",
      leaseId: acquired.lease.leaseId,
      owner: "worker-ü",
      task: "nightly report",
      token: acquired.lease.fencingToken,
    });
    expect(streamEntryToRaw(written[1]!)).toMatchObject({ kind: "released", leaseId: acquired.lease.leaseId, holdMs: expect.stringMatching(/^\d+$/) });

    const page = await store.events({ resource: "entries:packed" });
    expect(page.items.map((e) => [e.kind, e.owner, e.task, e.fencingToken])).toEqual([
      ["released", "worker-ü", "nightly report", acquired.lease.fencingToken],
      ["acquired", "worker-ü", "nightly report", acquired.lease.fencingToken],
    ]);
  });

  it("keep every field, an empty value and JSON detail included, through packing and reading", () => {
    const raw: RawEvent = {
      kind: "force_released",
      resource: "tenant-a:billing:run",
      leaseId: "l-1",
      owner: "",
      task: "t",
      token: "17",
      holdMs: "0",
      actor: "alice@example.com",
      reason: "stuck after deploy\nline two",
      detail: JSON.stringify({ note: "a \u001f-free \"quoted\" value", n: 1 }),
    };
    const fields = rawToStreamFields(raw);
    expect(fields[0]).toBe("krlotnhasd");
    expect(streamEntryToRaw(["1-0", fields])).toEqual({ id: "1-0", ...raw });
    expect(streamEntryToRaw(["2-0", rawToStreamFields({ kind: "contended", resource: "r" })])).toEqual({ id: "2-0", kind: "contended", resource: "r" });
  });

  it("written by an earlier version, a pair per field, read the same as new ones in the same stream", async () => {
    const legacy = [
      ["kind", "acquired", "resource", "entries:mixed", "leaseId", "old-lease", "owner", "old-worker", "task", "migrate", "token", "5"],
      ["kind", "released", "resource", "entries:mixed", "leaseId", "old-lease", "owner", "old-worker", "task", "migrate", "token", "5", "holdMs", "1200"],
    ];
    // After the stream's last entry (a stream takes only ids after it), ahead of the projection cursor.
    const lastMs = Number((await entries()).at(-1)?.[0].split("-")[0] ?? 0);
    const ms = Math.max(Date.now() - 60_000, lastMs + 1);
    await store.client.xadd(keys.events, `${ms}-0`, ...legacy[0]!);
    await store.client.xadd(keys.events, `${ms}-1`, ...legacy[1]!);

    const acquired = await store.acquire({ resource: "entries:mixed", owner: "new-worker", task: "migrate", ttlMs: 60_000 });
    if (!acquired.acquired) throw new Error("expected to acquire");

    const history = await store.events({ resource: "entries:mixed" });
    expect(history.items.map((e) => [e.kind, e.leaseId, e.owner, e.fencingToken, e.holdMs ?? null])).toEqual([
      ["acquired", acquired.lease.leaseId, "new-worker", acquired.lease.fencingToken, null],
      ["released", "old-lease", "old-worker", "5", 1200],
      ["acquired", "old-lease", "old-worker", "5", null],
    ]);
    // The projector's owner index took the old entries as it takes new ones.
    const byOwner = await store.events({ owner: "old-worker" });
    expect(byOwner.items.map((e) => e.kind)).toEqual(["released", "acquired"]);
    const byTask = await store.events({ task: "migrate" });
    expect(byTask.items.map((e) => e.owner)).toEqual(["new-worker", "old-worker", "old-worker"]);
  });
});
