import type { Cluster, Redis } from "ioredis";
import type pg from "pg";
import type { ObservedLock, ObservedSource } from "./observer";
import { readAdvisoryLocks, type ReadAdvisoryOptions } from "./pg-advisory";
import { readRedisLockKeys, type RedisKeysOptions } from "./redis-keys";
import { readShedLocks, type ShedLockOptions } from "./shedlock";

/** The observed-store readers as sources the observer samples. */

export function advisorySource(name: string, db: pg.Pool, options: Omit<ReadAdvisoryOptions, "includeQuery"> = {}): ObservedSource {
  return {
    name,
    kind: "pg-advisory",
    async sample() {
      const snapshot = await readAdvisoryLocks(db, options);
      const locks: ObservedLock[] = snapshot.locks
        .filter((lock) => lock.holders.length > 0)
        .map((lock) => ({
          resource: lock.resource,
          holder: lock.holders.map((h) => `pid ${h.pid} · ${h.applicationName || "no application_name"}`).join(", "),
          waiters: lock.waiters.length,
          detail: {
            pids: lock.holders.map((h) => h.pid),
            applicationName: lock.holders[0]!.applicationName,
            user: lock.holders[0]!.user,
            clientAddr: lock.holders[0]!.clientAddr,
            backendStart: lock.holders[0]!.backendStart?.toISOString() ?? null,
            waiterPids: lock.waiters.map((w) => w.pid),
          },
        }));
      return { locks, complete: !snapshot.truncated };
    },
  };
}

export function shedLockSource(name: string, db: pg.Pool, options: ShedLockOptions = {}): ObservedSource {
  return {
    name,
    kind: "shedlock",
    async sample() {
      const snapshot = await readShedLocks(db, options);
      const locks: ObservedLock[] = snapshot.rows
        .filter((row) => row.state === "held")
        .map((row) => ({
          resource: row.name,
          // Each run takes the row anew (a new locked_at), so two runs by one host are two holders.
          holder: `${row.lockedBy} · locked at ${row.lockedAt.toISOString()}`,
          waiters: 0,
          detail: { lockedBy: row.lockedBy, lockedAt: row.lockedAt.toISOString(), lockUntil: row.lockUntil.toISOString() },
        }));
      return { locks, complete: !snapshot.truncated };
    },
  };
}

export function redisKeysSource(name: string, client: Redis | Cluster, options: RedisKeysOptions): ObservedSource {
  return {
    name,
    kind: "redis-keys",
    async sample() {
      const snapshot = await readRedisLockKeys(client, options);
      const locks: ObservedLock[] = snapshot.keys
        .filter((key) => key.holders.length > 0)
        .map((key) => ({
          resource: key.key,
          holder: key.holders.map((h) => h.value).join(", "),
          waiters: 0,
          detail: { type: key.type, ttlMs: key.ttlMs, holders: key.holders.length },
        }));
      return { locks, complete: snapshot.complete };
    },
  };
}
