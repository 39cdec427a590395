/**
 * Leasewatch's own transaction advisory locks. A job on a schema (migrating it, refreshing
 * its rollups, appending to an audit chain, …) takes `hashtext('leasewatch.<job>:<schema>')`;
 * a lease grant takes `(hashtext('<schema>'), hashtext(resource))`. They are named here, once,
 * so that a reader of `pg_locks` (the pg-advisory observer) can tell them from a team's locks.
 */
export const INTERNAL_LOCK_JOBS = [
  "migrate",
  "create-schema",
  "partitions",
  "rollup",
  "audit.chain",
  "audit.migrate",
  "console-sessions.migrate",
  "api-tokens.migrate",
] as const;

export type InternalLockJob = (typeof INTERNAL_LOCK_JOBS)[number];

/** The text whose `hashtext()` is the advisory key `job` takes on `schema`. */
export function internalLockKey(job: InternalLockJob, schema: string): string {
  return `leasewatch.${job}:${schema}`;
}
