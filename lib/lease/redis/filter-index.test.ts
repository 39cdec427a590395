import { beforeAll, describe, expect, it } from "vitest";
import { setUpStoreFixture } from "@/test/support/store-suite";
import type { EventQuery, LeaseEvent } from "../types";
import { type BucketKeys, buildBucketKeys, buildIdStreamKey } from "./keys";
import { PROJECT_BATCH } from "./projector";
import type { RedisLeaseStore } from "./store";

/**
 * History projected before the owner / task id streams existed (an upgraded namespace, or one
 * loaded with its projection cursor set) must not vanish from owner and task reads: the projector
 * indexes it, a batch at a time, and until it is done such a read says it is partial.
 */
// One bucket: every event in one stream, so the history is several projector batches deep.
// Dropping a namespace this deep takes a while on a busy server.
const fixture = setUpStoreFixture("redis", { name: "redis-index", options: { buckets: 1 }, hookTimeoutMs: 180_000 });
let store: RedisLeaseStore;
let keys: BucketKeys;
const OWNERS = ["w1", "w2", "w3"];
const TASKS = ["t1", "t2"];
// More than one read's catch-up (READ_CATCH_UP_ROUNDS, 16 batches) can index.
const EVENTS = 24 * PROJECT_BATCH + 123;

beforeAll(() => {
  store = fixture.store;
  keys = buildBucketKeys(fixture.spec.namespace, 0);
});

/** Every page of a query, newest first. */
async function readAll(query: EventQuery): Promise<LeaseEvent[]> {
  const all: LeaseEvent[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.events({ ...query, cursor, limit: 500 });
    expect(page.partial).toBeUndefined();
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

describe("owner and task indexes over history projected before they existed", () => {
  const written: Array<{ id: string; owner: string; task: string; kind: string }> = [];

  it("are built by the projector from the retained stream, a batch at a time; reads say partial until then", async () => {
    // The store's entry format under backdated ids, with the projection cursor at the tail and no
    // `ids` cursor: the state a namespace projected by an earlier version is in.
    const startMs = Date.now() - 3_600_000;
    const pipeline = store.client.pipeline();
    for (let n = 0; n < EVENTS; n++) {
      const hold = Math.floor(n / 2);
      const e = { id: `${startMs + n}-0`, owner: OWNERS[hold % 3]!, task: TASKS[hold % 2]!, kind: n % 2 === 0 ? "acquired" : "released" };
      written.push(e);
      const fields = ["kind", e.kind, "resource", `jobs:${hold % 40}`, "leaseId", `lease-${hold}`, "owner", e.owner, "task", e.task, "token", String(hold + 1)];
      pipeline.xadd(keys.events, e.id, ...fields, ...(e.kind === "released" ? ["holdMs", "1"] : []));
    }
    pipeline.hset(keys.proj, "last", written.at(-1)!.id);
    await pipeline.exec();

    // The read catches the projection up first, which indexes some of the history, not all.
    const first = await store.events({ owner: "w1", limit: 50 });
    expect(first.partial?.reason).toBe("index_building");
    expect(first.items.length).toBeGreaterThan(0);
    expect(first.items.every((e) => e.owner === "w1")).toBe(true);
    const ownerStream = buildIdStreamKey(keys, "owner", "w1");
    const indexedSoFar = await store.client.xlen(ownerStream);
    expect(indexedSoFar).toBeLessThan(written.filter((e) => e.owner === "w1").length);

    // Each projection pass indexes a bounded batch per bucket; a few passes finish it.
    let passes = 0;
    for (;;) {
      passes += 1;
      if ((await store.project()).isCaughtUp) break;
      expect(passes).toBeLessThan(10);
    }
    expect(await store.client.hget(keys.proj, "ids")).toBe(written.at(-1)!.id);

    const newestFirst = [...written].reverse();
    for (const [query, match] of [
      [{ owner: "w1" }, (e: (typeof written)[number]) => e.owner === "w1"],
      [{ task: "t2" }, (e: (typeof written)[number]) => e.task === "t2"],
      [{ owner: "w3", kinds: ["released" as const] }, (e: (typeof written)[number]) => e.owner === "w3" && e.kind === "released"],
    ] as const) {
      const got = await readAll(query);
      expect(got.map((e) => `${e.owner}|${e.task}|${e.kind}|${e.at.getTime()}`)).toEqual(
        newestFirst.filter(match).map((e) => `${e.owner}|${e.task}|${e.kind}|${Number(e.id.split("-")[0])}`),
      );
    }
  }, 60_000);

  it("index each event once: indexing the history again adds nothing", async () => {
    const ownerStream = buildIdStreamKey(keys, "owner", "w2");
    const before = await store.client.xlen(ownerStream);
    expect(before).toBe(written.filter((e) => e.owner === "w2").length);
    // As if the `ids` cursor had been lost: the whole history is indexed again.
    await store.client.hdel(keys.proj, "ids");
    while (!(await store.project()).isCaughtUp);
    expect(await store.client.xlen(ownerStream)).toBe(before);
    expect((await readAll({ owner: "w2" })).length).toBe(before);
  }, 60_000);

  it("skip ids whose events were trimmed from the bucket stream, without fetching them", async () => {
    const cut = written[Math.floor(EVENTS / 2)]!.id;
    await store.client.xtrim(keys.events, "MINID", cut);
    const got = await readAll({ task: "t1" });
    const retained = written.filter((e) => e.task === "t1" && Number(e.id.split("-")[0]) >= Number(cut.split("-")[0]));
    expect(got.length).toBe(retained.length);
    // The id stream still names the trimmed events; the read stopped at the oldest retained one.
    expect(await store.client.xlen(buildIdStreamKey(keys, "task", "t1"))).toBeGreaterThan(retained.length);
  }, 60_000);
});
