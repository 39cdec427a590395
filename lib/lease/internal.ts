/**
 * `@leasewatch/lease/internal`: the stores' layouts and helpers that the Leasewatch console,
 * its lock API, seeds and benchmarks build on (key and SQL builders, schema helpers, input
 * schemas, script constants). Not part of the public API: any release may change it.
 * Applications use `@leasewatch/lease`.
 */

// Input rules (zod schemas) shared by the console and the lock API.
export {
  MAX_LEASE_ID_BYTES,
  MAX_LIST_LIMIT,
  ZCursor,
  ZFencingToken,
  ZLeaseId,
  ZOwner,
  ZPrefix,
  ZResource,
  ZStoreName,
  ZTask,
  ZTtlMs,
  SQL_IDENTIFIER,
  SQL_QUALIFIED_NAME,
  parseOrThrow,
  zSqlIdentifier,
} from "./validation";
export { DEFAULT_BACKOFF, computeBackoffDelay, type BackoffPolicy } from "./backoff";
export { GROUP_TOTALS_DEPTH } from "./group-totals";
// Wrapping a store in a layer that changes some of its methods (lazy migration, viewer scope, rate limits).
export { STORE_METHODS, layerStore, refusingStore, type StoreLayer, type StoreMethodName, type StoreMethods } from "./store-layer";
export { repeatUntilStopped } from "./stoppable-loop";

// PostgreSQL: schema names, statements, transactions, partitions and rollups.
export { DEFAULT_SCHEMA, SCHEMA_PATTERN, buildLeaseStatements, buildMigrationStatements, quoteSchema } from "./postgres/sql";
export { createSchemaInTransaction, inTransaction } from "./postgres/transaction";
export { INTERNAL_LOCK_JOBS, internalLockKey, type InternalLockJob } from "./postgres/lock-keys";
export { applyPendingMigrations, readMigrationStatus, type Migration, type MigrationLedger, type MigrationStatus } from "./postgres/migrations";
export { readBounded } from "./postgres/bounded-read";
export { ensureEventPartitions } from "./postgres/partitions";
export { TOP_PREFIXES_PER_BUCKET } from "./postgres/rollups";

// Redis: key layout, functions library, projector and stream codec.
export {
  bucketOf,
  buildBucketKeys,
  buildEvidsKey,
  buildGrantsKey,
  buildHourContentionKey,
  buildIdStreamKey,
  buildKindStreamKey,
  buildResourceKeys,
  buildStatsKey,
  buildStoreWideStatsHashKey,
  buildStoreWideStatsKey,
  type BucketKeys,
  type ResourceKeys,
} from "./redis/keys";
export {
  EVENTS_BACKLOG_FACTOR,
  EVIDS_TTL_S,
  FENCE_TTL_S,
  HOUR_TTL_S,
  INDEXED_EVENT_KINDS,
  LEASE_LIBRARY,
  MINUTE_TTL_S,
} from "./redis/scripts";
export { addGroupCounts, KIND_STREAM_KINDS, PREFIX_GROUPS_FIELD, PROJECTION_INTERVAL_MS } from "./redis/projector";
export { buildHoldKeys, holdClass, holdsFromEntries } from "./redis/held-at";
export { EVENT_FIELD_LETTERS, rawToStreamFields, streamEntryToRaw } from "./redis/codec";
export { parseTimeReply } from "./redis/connection";
export { DEFAULT_BUCKETS, DEFAULT_EVENTS_MAX_LEN, RESOURCE_EVENTS_MAX_LEN } from "./redis/store";
