import { z } from "zod";
import { LeaseError } from "./errors";
import { LEASE_EVENT_KINDS } from "./types";

/**
 * A name Leasewatch writes into SQL itself (a schema, a table, a role): lower-case letters,
 * digits and `_`, at most 63 (Postgres's limit), so it is checked here and then double-quoted.
 */
export const SQL_IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;
/** `[schema.]name`, each part an SQL_IDENTIFIER. */
export const SQL_QUALIFIED_NAME = new RegExp(`^(?:${SQL_IDENTIFIER.source.slice(1, -1)}\\.)?${SQL_IDENTIFIER.source.slice(1, -1)}$`);
/** A zod string that must be an SQL_IDENTIFIER; `what` names it in the error (e.g. "LEASEWATCH_CONSOLE_SCHEMA"). */
export const zSqlIdentifier = (what: string) => z.string().regex(SQL_IDENTIFIER, { error: `${what} must be a lower-case SQL identifier: a-z, 0-9, _ (max 63)` });

/** Accepted ranges (documented in docs/library.md). */
export const MIN_TTL_MS = 100;
export const MAX_TTL_MS = 24 * 60 * 60 * 1000;
export const MAX_RESOURCE_BYTES = 512;
export const MAX_NAME_BYTES = 256;
export const MAX_LEASE_ID_BYTES = 128;
export const MAX_LIST_LIMIT = 1000;

// Printable text: no control characters (C0, DEL, C1) and no lone surrogates.
const NON_PRINTABLE = /[\u0000-\u001f\u007f-\u009f]/;

// A force-release reason may run over several lines: tabs and newlines are its only controls.
const NON_PRINTABLE_MULTILINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

function text(field: string, maxBytes: number, options: { multiline?: boolean } = {}) {
  const nonPrintable = options.multiline ? NON_PRINTABLE_MULTILINE : NON_PRINTABLE;
  return z
    .string({ error: `${field} must be a string` })
    .min(1, { error: `${field} must not be empty` })
    .refine((s) => Buffer.byteLength(s, "utf8") <= maxBytes, { error: `${field} must be at most ${maxBytes} bytes (UTF-8)` })
    .refine((s) => !nonPrintable.test(s), { error: options.multiline ? `${field} must be printable text (tabs and newlines allowed, no other control characters)` : `${field} must be printable text (no control characters)` })
    .refine((s) => s.isWellFormed(), { error: `${field} must be valid Unicode` })
    .refine((s) => s.trim() === s, { error: `${field} must not start or end with whitespace` });
}

export const ZResource = text("resource", MAX_RESOURCE_BYTES);
export const ZOwner = text("owner", MAX_NAME_BYTES);
export const ZTask = text("task", MAX_NAME_BYTES);
export const ZLeaseId = text("leaseId", MAX_LEASE_ID_BYTES);
export const ZTtlMs = z
  .number({ error: "ttlMs must be a number of milliseconds" })
  .int({ error: "ttlMs must be a whole number of milliseconds" })
  .min(MIN_TTL_MS, { error: `ttlMs must be at least ${MIN_TTL_MS} ms` })
  .max(MAX_TTL_MS, { error: `ttlMs must be at most ${MAX_TTL_MS} ms (24 h)` });
/** Largest value a Postgres bigint holds: fencing tokens above it were never issued by, nor fit in, a Postgres table. */
export const MAX_BIGINT = 9223372036854775807n;
export const ZFencingToken = z.string().regex(/^[0-9]{1,30}$/, { error: "fencingToken must be a decimal string" });
export const ZPrefix = text("prefix", MAX_RESOURCE_BYTES);
export const ZLimit = z.number().int().min(1).max(MAX_LIST_LIMIT, { error: `limit must be between 1 and ${MAX_LIST_LIMIT}` });
export const ZCursor = z.string().min(1).max(2048);

export const ZAcquireInput = z.strictObject({
  resource: ZResource,
  owner: ZOwner,
  task: ZTask,
  ttlMs: ZTtlMs,
  leaseId: z.uuid({ error: "leaseId must be a UUID" }).optional(),
});
export const ZRenewInput = z.strictObject({ resource: ZResource, leaseId: ZLeaseId, ttlMs: ZTtlMs });
export const ZReleaseInput = z.strictObject({ resource: ZResource, leaseId: ZLeaseId, afterDeadlineLoss: z.boolean().optional() });
export const ZForceReleaseInput = z.strictObject({
  resource: ZResource,
  leaseId: ZLeaseId,
  actor: text("actor", MAX_NAME_BYTES),
  reason: text("reason", 1000, { multiline: true }),
});
export const ZForceReleasedQuery = z.strictObject({ resource: ZResource, leaseId: ZLeaseId });
export const ZFencingRejectionInput = z.strictObject({
  resource: ZResource,
  fencingToken: ZFencingToken,
  seenToken: ZFencingToken,
  by: text("by", MAX_NAME_BYTES),
  owner: ZOwner.optional(),
  task: ZTask.optional(),
  leaseId: ZLeaseId.optional(),
});
export const ZLostInput = z.strictObject({
  resource: ZResource,
  leaseId: ZLeaseId,
  owner: ZOwner,
  task: ZTask,
  fencingToken: ZFencingToken,
  reason: z.enum(["not_owner", "expired", "deadline_passed"]),
});
/** Cancels a read (types.ts ReadSignal); not a filter. */
export const ZSignal = z.instanceof(AbortSignal, { error: "signal must be an AbortSignal" }).optional();
export const ZListQuery = z.strictObject({
  prefix: ZPrefix.optional(),
  owner: ZOwner.optional(),
  task: ZTask.optional(),
  state: z.enum(["held", "expiring", "overdue", "lapsed"]).optional(),
  sort: z.enum(["expires", "held_longest", "newest"]).optional(),
  limit: ZLimit.optional(),
  cursor: ZCursor.optional(),
  signal: ZSignal,
});
export const ZEventQuery = z.strictObject({
  resource: ZResource.optional(),
  prefix: ZPrefix.optional(),
  owner: ZOwner.optional(),
  task: ZTask.optional(),
  leaseId: ZLeaseId.optional(),
  fencingToken: ZFencingToken.optional(),
  kinds: z.array(z.enum(LEASE_EVENT_KINDS)).optional(),
  from: z.date().optional(),
  to: z.date().optional(),
  limit: ZLimit.optional(),
  cursor: ZCursor.optional(),
  order: z.enum(["asc", "desc"]).optional(),
  signal: ZSignal,
});
export const MAX_HELD_AT_LIMIT = 1000;
export const ZHeldAtQuery = z.strictObject({
  at: z.date().refine((d) => !Number.isNaN(d.getTime()), { error: "at must be a valid date" }),
  resource: ZResource.optional(),
  prefix: ZPrefix.optional(),
  owner: ZOwner.optional(),
  task: ZTask.optional(),
  limit: z.number().int().min(1).max(MAX_HELD_AT_LIMIT, { error: `limit must be 1..${MAX_HELD_AT_LIMIT}` }).optional(),
  signal: ZSignal,
});
export const ZStatsQuery = z.strictObject({
  from: z.date(),
  to: z.date(),
  bucketMs: z.union([z.literal(60_000), z.literal(3_600_000), z.literal(86_400_000)]),
  prefixDepth: z.number().int().min(1).max(3).optional(),
  signal: ZSignal,
});
export const ZPrefixStatsQuery = z.strictObject({
  prefix: ZPrefix,
  from: z.date(),
  to: z.date(),
  bucketMs: z.union([z.literal(3_600_000), z.literal(86_400_000)], { error: "bucketMs must be an hour or a day (group counts are kept per hour)" }),
  signal: ZSignal,
});
export const ZGroupTotalsQuery = z.strictObject({
  prefixDepth: z.number().int().min(1, { error: "prefixDepth must be 1..3" }).max(3, { error: "prefixDepth must be 1..3" }),
  maxGroups: z.number().int().min(1, { error: "maxGroups must be 1..200" }).max(200, { error: "maxGroups must be 1..200" }),
  signal: ZSignal,
});
export const ZStoreName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, { error: "store name must be 1-63 chars of a-z, 0-9, '-' or '_'" });

/**
 * Parse `input` with `schema` or throw a LeaseError naming the first problem.
 * Called before any store I/O so bad input never writes anything.
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  const message =
    issue?.code === "unrecognized_keys"
      ? `unknown option(s) ${issue.keys.map((k) => `"${k}"`).join(", ")}`
      : `${path}${issue?.message ?? "invalid input"}`;
  throw new LeaseError(`${what}: ${message}`);
}

/** Compare two decimal fencing tokens numerically (-1, 0, 1). */
export function compareFencingTokens(a: string, b: string): -1 | 0 | 1 {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export { resourcePrefix } from "./resource-prefix";

