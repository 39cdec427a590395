import { Cluster, Redis } from "ioredis";
import pg from "pg";
import type { TObservedConfig } from "./config";
import { resolveAdvisoryNames, terminateAdvisoryHolder, type AdvisoryKey } from "./pg-advisory";
import { isObservedKey, releaseRedisLockKey } from "./redis-keys";
import type { TObservedShown as ObservedShown } from "./release-form";
import { clusterSeedsOf } from "./runtime";
import { releaseShedLock } from "./shedlock";

/**
 * Force-release of one observed lock, compared with what the console showed:
 * nothing happens unless the lock still shows exactly that holder. Runs on the
 * store's `releaseUrl` (a connection of its own, opened for this one call), never
 * on the read-only `url` the observer samples through.
 */

export type ObservedReleaseVerdict =
  /** The holder shown no longer holds the lock (another does, or none): nothing changed. */
  | { done: false; reason: "changed" }
  /** The lock was released (ShedLock, Redis) or its holding backend terminated (advisory). */
  | { done: true };

export class ObservedReleaseUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ObservedReleaseUnavailable";
  }
}

const CONNECT_TIMEOUT_MS = 5_000;
const STATEMENT_TIMEOUT_MS = 5_000;

/** An advisory lock's resource name → its key: the naming map's name, or `advisory:<key>` / `advisory:<k1>,<k2>`. */
export async function advisoryKeyOf(db: pg.Client, config: Extract<TObservedConfig, { kind: "pg-advisory" }>, resource: string): Promise<AdvisoryKey | null> {
  let text: string | null = null;
  if (config.names?.some((n) => n.name === resource)) {
    const names = await resolveAdvisoryNames(db, { names: config.names.filter((n) => n.name === resource) });
    text = [...names.keys()][0] ?? null;
  } else if (resource.startsWith("advisory:")) {
    text = resource.slice("advisory:".length);
  }
  if (text === null) return null;
  const pair = /^(-?\d{1,10}),(-?\d{1,10})$/.exec(text);
  if (pair) return { form: "pair", key1: Number(pair[1]), key2: Number(pair[2]) };
  if (/^-?\d{1,19}$/.test(text)) return { form: "bigint", key: BigInt(text).toString() };
  return null;
}

function redisFor(url: string): Redis | Cluster {
  const seeds = clusterSeedsOf(url);
  if (seeds) return new Cluster(seeds, { redisOptions: { connectionName: "leasewatch-release", connectTimeout: CONNECT_TIMEOUT_MS }, lazyConnect: true });
  return new Redis(url, { connectionName: "leasewatch-release", maxRetriesPerRequest: 1, connectTimeout: CONNECT_TIMEOUT_MS, lazyConnect: true });
}

/**
 * Releases the lock `resource` of the observed store `config` only while it still
 * shows `shown`. Throws ObservedReleaseUnavailable when this store has no
 * `releaseUrl` or the name is not one of its locks; any other error (connection,
 * privilege) is thrown as is, and whether anything changed is then unknown.
 */
export async function releaseObservedLock(config: TObservedConfig, resource: string, shown: ObservedShown): Promise<ObservedReleaseVerdict> {
  if (shown.kind !== config.kind) throw new ObservedReleaseUnavailable(`store "${config.name}" holds ${config.kind} locks, not ${shown.kind}`);
  if (!config.releaseUrl) throw new ObservedReleaseUnavailable(`store "${config.name}" has no releaseUrl, so its locks cannot be released from the console`);
  if (config.kind === "redis-keys" && shown.kind === "redis-keys") {
    if (!isObservedKey(resource, config.patterns)) throw new ObservedReleaseUnavailable(`"${resource}" does not match the store's key patterns`);
    const client = redisFor(config.releaseUrl);
    client.on("error", () => {});
    try {
      await client.connect();
      return (await releaseRedisLockKey(client, { key: resource, type: shown.type, value: shown.value })) ? { done: true } : { done: false, reason: "changed" };
    } finally {
      client.disconnect();
    }
  }
  const db = new pg.Client({ connectionString: config.releaseUrl, application_name: "leasewatch-release", connectionTimeoutMillis: CONNECT_TIMEOUT_MS, statement_timeout: STATEMENT_TIMEOUT_MS });
  db.on("error", () => {});
  await db.connect();
  try {
    if (config.kind === "shedlock" && shown.kind === "shedlock") {
      const released = await releaseShedLock(db, { ...(config.table ? { table: config.table } : {}), name: resource, lockedBy: shown.lockedBy, lockedAt: new Date(shown.lockedAt) });
      return released ? { done: true } : { done: false, reason: "changed" };
    }
    if (config.kind === "pg-advisory" && shown.kind === "pg-advisory") {
      const key = await advisoryKeyOf(db, config, resource);
      if (!key) throw new ObservedReleaseUnavailable(`"${resource}" names no advisory key of store "${config.name}"`);
      const terminated = await terminateAdvisoryHolder(db, { key, pid: shown.pid, backendStart: new Date(shown.backendStart) });
      return terminated ? { done: true } : { done: false, reason: "changed" };
    }
    throw new ObservedReleaseUnavailable(`store "${config.name}" cannot release ${shown.kind} locks`);
  } finally {
    await db.end().catch(() => {});
  }
}
