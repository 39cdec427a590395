export * from "./types";
export * from "./errors";
export { compareFencingTokens, resourcePrefix, MIN_TTL_MS, MAX_TTL_MS, MAX_RESOURCE_BYTES, MAX_NAME_BYTES } from "./validation";
export { holdBucketIndex, histogramQuantile } from "./histogram";
export { adviseTtl, slackBucketIndex, slackGroupOf, summariseSlack } from "./slack";
// Stores and client are exported as they land:
export { PostgresLeaseStore } from "./postgres/store";
export type { PostgresLeaseStoreOptions } from "./postgres/store";
export { ReadAbortedError, DEFAULT_STATEMENT_TIMEOUT_MS } from "./postgres/bounded-read";
export { RedisLeaseStore } from "./redis/store";
export { DEFAULT_READ_KEY_BUDGET } from "./redis/read-budget";
export { LeaseClient, LeaseHandle, computeLocalDeadline } from "./client";
export type { LeaseClientOptions, LeaseClientEvent, LeaseContext, WithLeaseOptions, AcquireOptions, LostReason } from "./client";
export { createFencedTable, fencedKey, fencedWrite, readFencedHistory } from "./fencing";
export type { FencedWriteOptions, FencedWriteResult, CreateFencedTableOptions } from "./fencing";
