/**
 * A fast path in front of ZAcquireBody, the body of the API's busiest request. The schema stays
 * the validator of record: the usual body — a plain object with resource, ownerId, task and a whole
 * ttlMs in range (and perhaps a store and a waitMs), its text printable ASCII — is accepted here
 * without it, and anything else goes through the schema, which accepts it or names the problem. So
 * this only ever accepts what the schema accepts, returns the same value (keys in the schema's
 * order: the Idempotency-Key fingerprint is its JSON), and every error message is the schema's.
 */
import { MAX_NAME_BYTES, MAX_RESOURCE_BYTES, MAX_TTL_MS, MIN_TTL_MS } from "@leasewatch/lease";
import { MAX_WAIT_MS, type TAcquireBody } from "./schemas";

// Printable ASCII that neither starts nor ends with a space passes every rule of the schema's text
// fields (non-empty, no control character, well-formed, no surrounding whitespace), and its UTF-8
// length is its length.
const PLAIN_TEXT = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
// ZStoreName's pattern.
const STORE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const KEYS = new Set(["store", "resource", "ownerId", "task", "ttlMs", "waitMs"]);

function isPlainText(value: unknown, maxBytes: number): value is string {
  return typeof value === "string" && value.length <= maxBytes && PLAIN_TEXT.test(value);
}

/** The parsed body, or undefined when only the schema can tell. */
export function acquireBodyFastPath(body: unknown): TAcquireBody | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const proto: unknown = Object.getPrototypeOf(body);
  if (proto !== Object.prototype && proto !== null) return undefined;
  const keys = Object.keys(body);
  if (keys.length < 4 || keys.length > 6) return undefined;
  const b = body as Record<string, unknown>;
  const { store, resource, ownerId, task, ttlMs, waitMs } = b;
  for (const key of keys) if (!KEYS.has(key)) return undefined;
  if (!isPlainText(resource, MAX_RESOURCE_BYTES) || !isPlainText(ownerId, MAX_NAME_BYTES) || !isPlainText(task, MAX_NAME_BYTES)) return undefined;
  if (typeof ttlMs !== "number" || !Number.isInteger(ttlMs) || ttlMs < MIN_TTL_MS || ttlMs > MAX_TTL_MS) return undefined;
  if (keys.length === 4) return { resource, ownerId, task, ttlMs };
  const hasStore = Object.hasOwn(b, "store");
  const hasWait = Object.hasOwn(b, "waitMs");
  if (hasStore && !(typeof store === "string" && STORE_NAME.test(store))) return undefined;
  if (hasWait && !(typeof waitMs === "number" && Number.isInteger(waitMs) && waitMs >= 0 && waitMs <= MAX_WAIT_MS)) return undefined;
  return {
    ...(hasStore ? { store: store as string } : {}),
    resource,
    ownerId,
    task,
    ttlMs,
    ...(hasWait ? { waitMs: waitMs as number } : {}),
  };
}
