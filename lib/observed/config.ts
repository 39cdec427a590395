import { z } from "zod";
import { ZStoreName } from "@leasewatch/lease/internal";

/**
 * Observed stores, from `LEASEWATCH_OBSERVED`: a JSON array of locks the library
 * does not own, read-only. Unset or empty: none.
 *
 *   { "name": "pg-advisory", "kind": "pg-advisory", "url": "postgres://…",
 *     "names": [{ "name": "billing-close", "hashtext": "billing-close" }, { "name": "reports", "key": "424242" }],
 *     "showQuery": true }
 *   { "name": "shedlock", "kind": "shedlock", "url": "postgres://…", "table": "public.shedlock", "lockAtMostForMs": 600000 }
 *   { "name": "redis-locks", "kind": "redis-keys", "url": "redis://…", "patterns": ["locks:*", "mutex:*"] }
 *
 * Each may add `releaseUrl`: the connection the console's audited force-release
 * uses, so `url` stays read-only; without it that store's locks cannot be released.
 *
 * `LEASEWATCH_OBSERVE_INTERVAL_MS` (default 5000) is how often the observer samples.
 */
const ZPgUrl = z.string().regex(/^postgres(ql)?:\/\//, { error: "needs a postgres:// url" });
const ZRedisUrl = z.string().regex(/^(rediss?|redis\+cluster):\/\//, { error: "needs a redis://, rediss:// or redis+cluster:// url" });
const ZAdvisoryName = z
  .strictObject({
    name: z.string().min(1).max(256),
    key: z.string().regex(/^-?[0-9]{1,19}$/, { error: "key must be a bigint" }).optional(),
    pair: z.tuple([z.int().min(-(2 ** 31)).max(2 ** 31 - 1), z.int().min(-(2 ** 31)).max(2 ** 31 - 1)]).optional(),
    hashtext: z.string().min(1).max(256).optional(),
  })
  .refine((n) => [n.key, n.pair, n.hashtext].filter((v) => v !== undefined).length === 1, { error: "give each name exactly one of key, pair or hashtext" });

export const ZObservedConfig = z.discriminatedUnion("kind", [
  z.strictObject({
    name: ZStoreName,
    kind: z.literal("pg-advisory"),
    url: ZPgUrl,
    /** The connection force-release uses (a role with pg_signal_backend); unset: the console offers no termination here. */
    releaseUrl: ZPgUrl.optional(),
    names: z.array(ZAdvisoryName).max(10_000).optional(),
    /** Show holders' statement text to operators (off: never read). */
    showQuery: z.boolean().optional(),
  }),
  z.strictObject({
    name: ZStoreName,
    kind: z.literal("shedlock"),
    url: ZPgUrl,
    /** The connection force-release uses (UPDATE on the table); unset: the console offers no force-release here. */
    releaseUrl: ZPgUrl.optional(),
    table: z.string().regex(/^([A-Za-z_][A-Za-z0-9_]{0,62}\.)?[A-Za-z_][A-Za-z0-9_]{0,62}$/, { error: "table must be name or schema.name" }).optional(),
    lockAtMostForMs: z.int().positive().optional(),
  }),
  z.strictObject({
    name: ZStoreName,
    kind: z.literal("redis-keys"),
    url: ZRedisUrl,
    /** The connection force-release uses (an ACL user with +eval on the lock keys); unset: the console offers no force-release here. */
    releaseUrl: ZRedisUrl.optional(),
    patterns: z.array(z.string().min(1).max(256)).min(1, { error: "give at least one key pattern, e.g. locks:*" }).max(32),
  }),
]);
export type TObservedConfig = z.infer<typeof ZObservedConfig>;

export class ObservedConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ObservedConfigError";
  }
}

/** Parses LEASEWATCH_OBSERVED, or throws an error that says what to fix. */
export function parseObservedConfig(env: NodeJS.ProcessEnv = process.env): TObservedConfig[] {
  const raw = env.LEASEWATCH_OBSERVED?.trim();
  if (!raw) return [];
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new ObservedConfigError('LEASEWATCH_OBSERVED is not valid JSON; expected e.g. [{"name":"pg-advisory","kind":"pg-advisory","url":"postgres://…"}]');
  }
  const parsed = z
    .array(ZObservedConfig)
    .refine((list) => new Set(list.map((s) => s.name)).size === list.length, { error: "observed store names must be unique" })
    .safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length ? ` at ${issue.path.join(".")}` : "";
    throw new ObservedConfigError(`LEASEWATCH_OBSERVED is invalid${where}: ${issue?.message ?? "unknown problem"}`);
  }
  return parsed.data;
}

export function observeIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.LEASEWATCH_OBSERVE_INTERVAL_MS;
  if (raw === undefined || raw === "") return 5_000;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 500 || n > 300_000) throw new ObservedConfigError("LEASEWATCH_OBSERVE_INTERVAL_MS must be a whole number of ms between 500 and 300000");
  return n;
}
