/**
 * `@leasewatch/lease`: the public API. Everything exported here follows semantic versioning.
 * `pg` and `ioredis` are optional peers, required only when a store of that kind is created.
 */
export * from "./types";
export * from "./errors";
export { compareFencingTokens, resourcePrefix, MIN_TTL_MS, MAX_TTL_MS, MAX_RESOURCE_BYTES, MAX_NAME_BYTES } from "./validation";
export { parseDuration, formatDuration } from "./duration";
export { holdBucketIndex, histogramQuantile } from "./histogram";
export { isPrefixServedByGroups, prefixGroupOf, PREFIX_GROUP_DEPTH } from "./prefix-groups";
export { adviseTtl, slackBucketIndex, slackGroupOf, summariseSlack } from "./slack";
export { PostgresLeaseStore } from "./postgres/store";
export type { PostgresLeaseStoreOptions } from "./postgres/store";
export { ReadAbortedError, DEFAULT_STATEMENT_TIMEOUT_MS } from "./postgres/bounded-read";
export { RedisLeaseStore, RedisStoreError } from "./redis/store";
export type { TRedisLeaseStoreOptions as RedisLeaseStoreOptions } from "./redis/store";
export type { RedisClient } from "./redis/connection";
export { DEFAULT_READ_KEY_BUDGET } from "./redis/read-budget";
export { LeaseClient, LeaseHandle, computeLocalDeadline } from "./client";
export type { LeaseClientOptions, LeaseClientEvent, LeaseContext, WithLeaseOptions, AcquireOptions, LostReason, CloseOptions, CloseResult } from "./client";
export { createFencedTable, fencedKey, fencedWrite, readFencedHistory } from "./fencing";
export type { FencedWriteOptions, FencedWriteResult, CreateFencedTableOptions, Queryable } from "./fencing";
export { instrumentStore, telemetryPrefixGroup, INSTRUMENTATION_SCOPE } from "./telemetry";
export type { TelemetryOptions } from "./telemetry";
export type { ConsoleCommand, ConsoleCommandModule, ConsoleCommandName, ConsoleStoreConfig } from "./cli/console-module";
