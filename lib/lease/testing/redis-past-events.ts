import type { Cluster, Redis } from "ioredis";
import { freshRedisNamespace, TEST_REDIS_URL } from "./isolation";
import { rawToStreamFields, type RawEvent, streamEntryToRaw } from "../redis/codec";
import { buildBucketKeys } from "../redis/keys";
import { RedisLeaseStore } from "../redis/store";

/**
 * Redis events from the past, for retention tests: the store's scripts stamp events with the
 * server's clock, so old events are written with the fields of real ones (recorded by a real
 * acquire and release in a scratch namespace) under old ids. A stream only takes ids after its
 * last one: write these before any event of now.
 */
async function realEvents(): Promise<{ acquired: RawEvent; released: RawEvent }> {
  const fresh = freshRedisNamespace(TEST_REDIS_URL);
  const store = new RedisLeaseStore({ name: "redis-template", url: fresh.url, namespace: fresh.namespace, buckets: 1 });
  try {
    const result = await store.acquire({ resource: "template:1", owner: "owner-a", task: "task-1", ttlMs: 60_000 });
    if (!result.acquired) throw new Error("expected to acquire the template resource");
    await store.release({ resource: "template:1", leaseId: result.lease.leaseId });
    const entries = (await store.client.xrange(buildBucketKeys(fresh.namespace, 0).events, "-", "+")).map(streamEntryToRaw);
    // Its id is left behind when the fields are written again (rawToStreamFields).
    const byKind = (kind: string) => entries.find((e) => e.kind === kind)!;
    return { acquired: byKind("acquired"), released: byKind("released") };
  } finally {
    await store.close();
    await fresh.drop();
  }
}

/** Writes an acquired and an ended event (`endedKind`) of resource `past:<i>` at each instant, into `stream`. */
export async function writePastEvents(redis: Redis | Cluster, stream: string, atMs: readonly number[], endedKind = "released"): Promise<void> {
  const template = await realEvents();
  const pipeline = redis.pipeline();
  atMs.forEach((ms, i) => {
    const resource = `past:${i}`;
    pipeline.xadd(stream, `${ms}-0`, ...rawToStreamFields({ ...template.acquired, resource }));
    pipeline.xadd(stream, `${ms}-1`, ...rawToStreamFields({ ...template.released, resource, kind: endedKind }));
  });
  await pipeline.exec();
}
