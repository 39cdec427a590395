import type { z } from "zod";
import type { AcquireInput, ReleaseInput, RenewInput } from "./types";
import {
  MAX_LEASE_ID_BYTES,
  MAX_NAME_BYTES,
  MAX_RESOURCE_BYTES,
  MAX_TTL_MS,
  MIN_TTL_MS,
  parseOrThrow,
  ZAcquireInput,
  ZReleaseInput,
  ZRenewInput,
} from "./validation";

/**
 * A fast path in front of the zod schemas of the hot operations (acquire, renew, release).
 * The schemas cost a few microseconds a call, as much as a third of a bare lock's client CPU. The
 * usual input — a plain object with exactly the schema's keys, printable ASCII text and a whole
 * ttl in range — is accepted here without them; anything else (a longer name, non-ASCII text, a
 * bad value, an extra key) goes through the schema, which accepts it or names the problem. So the
 * rules and the messages are the schema's: this only ever accepts what the schema accepts, and
 * returns the same values.
 */

// Printable ASCII that does not start or end with a space: for such a string the schema's checks
// (non-empty, no control character, well-formed, no surrounding whitespace) all pass, and its
// UTF-8 length is its length.
const PLAIN_TEXT = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

function isPlainText(value: unknown, maxBytes: number): value is string {
  return typeof value === "string" && value.length <= maxBytes && PLAIN_TEXT.test(value);
}

function isTtl(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= MIN_TTL_MS && value <= MAX_TTL_MS;
}

/** A plain object whose own enumerable keys are exactly `count` (the caller checks which). */
function isPlainRecord(input: unknown, count: number): input is Record<string, unknown> {
  if (typeof input !== "object" || input === null) return false;
  const proto: unknown = Object.getPrototypeOf(input);
  return (proto === Object.prototype || proto === null) && Object.keys(input).length === count;
}

const has = (o: object, key: string) => Object.hasOwn(o, key);

export function parseAcquireInput(input: AcquireInput): z.output<typeof ZAcquireInput> {
  if (
    isPlainRecord(input, 4) &&
    has(input, "resource") &&
    has(input, "owner") &&
    has(input, "task") &&
    has(input, "ttlMs") &&
    isPlainText(input.resource, MAX_RESOURCE_BYTES) &&
    isPlainText(input.owner, MAX_NAME_BYTES) &&
    isPlainText(input.task, MAX_NAME_BYTES) &&
    isTtl(input.ttlMs)
  ) {
    return { resource: input.resource, owner: input.owner, task: input.task, ttlMs: input.ttlMs };
  }
  return parseOrThrow(ZAcquireInput, input, "acquire");
}

export function parseRenewInput(input: RenewInput): z.output<typeof ZRenewInput> {
  if (
    isPlainRecord(input, 3) &&
    has(input, "resource") &&
    has(input, "leaseId") &&
    has(input, "ttlMs") &&
    isPlainText(input.resource, MAX_RESOURCE_BYTES) &&
    isPlainText(input.leaseId, MAX_LEASE_ID_BYTES) &&
    isTtl(input.ttlMs)
  ) {
    return { resource: input.resource, leaseId: input.leaseId, ttlMs: input.ttlMs };
  }
  return parseOrThrow(ZRenewInput, input, "renew");
}

export function parseReleaseInput(input: ReleaseInput): z.output<typeof ZReleaseInput> {
  if (
    isPlainRecord(input, 2) &&
    has(input, "resource") &&
    has(input, "leaseId") &&
    isPlainText(input.resource, MAX_RESOURCE_BYTES) &&
    isPlainText(input.leaseId, MAX_LEASE_ID_BYTES)
  ) {
    return { resource: input.resource, leaseId: input.leaseId };
  }
  return parseOrThrow(ZReleaseInput, input, "release");
}
