/**
 * What the force-release routes accept (zod), server side. The answers' types and
 * the limits the dialogs share are in force-release-types.ts, which stays free of
 * zod so the browser bundle never carries it (zod probes `new Function`, which the
 * console's CSP reports as a violation).
 */
import { z } from "zod";
import { MAX_BULK_LEASES, MAX_REASON_CHARS, MIN_REASON_CHARS } from "./force-release-types";

export * from "./force-release-types";


const MAX_RESOURCE_BYTES = 512;
const NON_PRINTABLE = /[\u0000-\u001f\u007f-\u009f]/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STORE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/i;

const byteLength = (s: string) => new TextEncoder().encode(s).length;

const ZStoreName = z.string({ error: "store is required" }).regex(STORE_NAME, { error: "store must be a store name" });
const ZResourceName = z
  .string({ error: "resource is required" })
  .min(1, { error: "resource must not be empty" })
  .refine((s) => byteLength(s) <= MAX_RESOURCE_BYTES, { error: `resource must be at most ${MAX_RESOURCE_BYTES} bytes` })
  .refine((s) => !NON_PRINTABLE.test(s), { error: "resource must be printable text" });
const ZLeaseIdText = z.string({ error: "leaseId is required" }).regex(UUID, { error: "leaseId must be a lease id (a UUID)" });
export const ZReason = z
  .string({ error: "reason is required" })
  .trim()
  .min(MIN_REASON_CHARS, { error: `reason must be at least ${MIN_REASON_CHARS} characters` })
  .max(MAX_REASON_CHARS, { error: `reason must be at most ${MAX_REASON_CHARS} characters` })
  // Tabs and line ends (LF, CRLF, CR) are the reason's only controls; lib/audit/text.ts normalises the line ends.
  .refine((s) => !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(s), { error: "reason must be printable text" });

/** One lease: the form shows it, the reason says why, `confirm` is the resource typed again. */
export const ZForceReleaseForm = z
  .strictObject({
    store: ZStoreName,
    resource: ZResourceName,
    leaseId: ZLeaseIdText,
    reason: ZReason,
    confirm: z.string({ error: "type the resource name to confirm" }),
  })
  .refine((f) => f.confirm === f.resource, { error: "the typed name does not match the resource", path: ["confirm"] });
export type TForceReleaseForm = z.infer<typeof ZForceReleaseForm>;

/** Every lapsed or overdue lease under a prefix: the exact leases the dialog listed, `confirm` is the prefix typed again. */
export const ZBulkReleaseForm = z
  .strictObject({
    prefix: ZResourceName,
    reason: ZReason,
    confirm: z.string({ error: "type the prefix to confirm" }),
    leases: z
      .array(z.strictObject({ store: ZStoreName, resource: ZResourceName, leaseId: ZLeaseIdText }))
      .min(1, { error: "no lease to release" })
      .max(MAX_BULK_LEASES, { error: `at most ${MAX_BULK_LEASES} leases at once` }),
  })
  .refine((f) => f.confirm === f.prefix, { error: "the typed prefix does not match", path: ["confirm"] })
  .refine((f) => f.leases.every((l) => l.resource.startsWith(f.prefix)), { error: "every lease must be under the prefix", path: ["leases"] });
export type TBulkReleaseForm = z.infer<typeof ZBulkReleaseForm>;

