/**
 * The API's request and response shapes. The same schemas validate requests and
 * generate `/v1/openapi.json` (openapi.ts), so the document cannot drift.
 */
import { z } from "zod";
import { MAX_TTL_MS, MIN_TTL_MS } from "@leasewatch/lease";
import { ZFencingToken, ZOwner, ZResource, ZStoreName, ZTask } from "@leasewatch/lease/internal";

export const MAX_WAIT_MS = 30_000;

export const ZAcquireBody = z
  .strictObject({
    store: ZStoreName.optional().meta({ description: "Store name; default the token's first store." }),
    resource: ZResource.meta({ description: "Resource to lock; must start with one of the token's prefixes.", example: "demo:report:2026-04" }),
    ownerId: ZOwner.meta({ description: "Who holds the lease (worker id).", example: "worker-7" }),
    task: ZTask.meta({ description: "What the holder does with it.", example: "run-4411" }),
    ttlMs: z.number().int().min(MIN_TTL_MS).max(MAX_TTL_MS).optional().meta({ example: 10_000 }),
    ttlSeconds: z.number().min(MIN_TTL_MS / 1000).max(MAX_TTL_MS / 1000).optional(),
    waitMs: z.number().int().min(0).max(MAX_WAIT_MS).optional().meta({ description: "Wait on the server (with backoff) up to this long for the lock." }),
  })
  .refine((b) => (b.ttlMs === undefined) !== (b.ttlSeconds === undefined), { error: "give exactly one of ttlMs or ttlSeconds" })
  .meta({ id: "AcquireRequest" });
export type TAcquireBody = z.infer<typeof ZAcquireBody>;

export const ZLeaseHandle = z.string().min(1).max(4096).meta({ id: "LeaseHandle", description: "Opaque, authenticated lease handle." });

export const ZAcquired = z
  .strictObject({
    acquired: z.literal(true),
    leaseId: ZLeaseHandle,
    store: z.string(),
    resource: z.string(),
    fencingToken: z.string().meta({ description: "Decimal string, strictly increasing per store and resource." }),
    expiresAt: z.iso.datetime(),
    ttlMs: z.number().int(),
  })
  .meta({ id: "Acquired" });
export const ZNotAcquired = z
  .strictObject({
    acquired: z.literal(false),
    holder: z.strictObject({ owner: z.string(), task: z.string(), expiresAt: z.iso.datetime() }).optional(),
  })
  .meta({ id: "NotAcquired" });
export const ZAcquireResponse = z.union([ZAcquired, ZNotAcquired]).meta({ id: "AcquireResponse" });

export const ZRenewBody = z
  .strictObject({
    ttlMs: z.number().int().min(MIN_TTL_MS).max(MAX_TTL_MS).optional(),
    ttlSeconds: z.number().min(MIN_TTL_MS / 1000).max(MAX_TTL_MS / 1000).optional(),
  })
  .refine((b) => b.ttlMs === undefined || b.ttlSeconds === undefined, { error: "give at most one of ttlMs or ttlSeconds" })
  .meta({ id: "RenewRequest", description: "Without a ttl the lease is renewed for the ttl it was acquired with." });
export const ZRenewResponse = z
  .strictObject({ renewed: z.literal(true), expiresAt: z.iso.datetime(), ttlMs: z.number().int(), renewals: z.number().int() })
  .meta({ id: "RenewResponse" });
export const ZReleaseResponse = z.strictObject({ released: z.literal(true), holdMs: z.number() }).meta({ id: "ReleaseResponse" });

export const ZHandleParams = z.strictObject({ leaseId: ZLeaseHandle });
export const ZResourceParams = z.strictObject({ resource: ZResource });

export const ZFencingReportBody = z
  .strictObject({
    store: ZStoreName.optional(),
    resource: ZResource,
    fencingToken: ZFencingToken.meta({ description: "The stale token that was refused." }),
    seenToken: ZFencingToken.meta({ description: "The token the downstream had already seen." }),
    by: ZOwner.meta({ description: "Name of the downstream that refused the write." }),
  })
  .meta({ id: "FencingRejection" });
export const ZFencingReportResponse = z.strictObject({ recorded: z.literal(true), eventId: z.string() }).meta({ id: "FencingRejectionRecorded" });

export const ZLockView = z
  .strictObject({
    store: z.string(),
    resource: z.string(),
    owner: z.string(),
    task: z.string(),
    fencingToken: z.string(),
    acquiredAt: z.iso.datetime(),
    expiresAt: z.iso.datetime(),
    ttlMs: z.number().int(),
  })
  .meta({ id: "Lock", description: "A current lease as others see it (no lease id)." });

export const ZListQuery = z.strictObject({
  prefix: ZResource.optional().meta({ description: "Resource prefix; default the token's only prefix." }),
  store: ZStoreName.optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  cursor: z.string().min(1).max(2048).optional(),
});
export const ZStoreQuery = z.strictObject({ store: ZStoreName.optional() });
export const ZListResponse = z.strictObject({ items: z.array(ZLockView), nextCursor: z.string().optional() }).meta({ id: "LockList" });

export const ZProblem = z
  .looseObject({ type: z.string(), title: z.string(), status: z.number().int(), detail: z.string(), instance: z.string().optional() })
  .meta({ id: "Problem", description: "RFC 9457 problem details." });
