/** `/v1/openapi.json`: OpenAPI 3.1, built from the zod schemas that validate requests. */
import { z } from "zod";
import {
  ZAcquireBody,
  ZAcquireResponse,
  ZFencingReportBody,
  ZFencingReportResponse,
  ZListResponse,
  ZLockView,
  ZProblem,
  ZReleaseResponse,
  ZRenewBody,
  ZRenewResponse,
} from "./schemas";

type Json = Record<string, unknown>;

function components(): Json {
  const registry = z.globalRegistry;
  const all = z.toJSONSchema(registry, { target: "draft-2020-12", io: "output", unrepresentable: "any", uri: (id) => `#/components/schemas/${id}` }) as {
    schemas: Record<string, Json>;
  };
  const result: Record<string, Json> = {};
  for (const [id, s] of Object.entries(all.schemas)) {
    const copy = { ...s };
    delete copy.$schema;
    delete copy.$id;
    result[id] = copy;
  }
  return result;
}

/** Every top-level schema carries a `.meta({ id })`, so paths only reference components. */
function json(s: z.ZodType) {
  const id = z.globalRegistry.get(s)?.id;
  if (!id) throw new Error("an OpenAPI body schema needs a .meta({ id })");
  return { "application/json": { schema: { $ref: `#/components/schemas/${id}` } } };
}
const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } });
const errors = {
  "400": problem("Invalid request"),
  "401": problem("Missing or invalid token"),
  "403": problem("Action not allowed for this token"),
  "404": problem("Not found (or outside the token's tenant)"),
  "429": problem("Rate or concurrency limit; see Retry-After"),
  "503": problem("Store did not answer in time"),
};
const handleParam = { name: "leaseId", in: "path", required: true, description: "Lease handle from acquire", schema: { type: "string" } };
const storeParam = { name: "store", in: "query", required: false, schema: { type: "string" } };

export function buildOpenApiDocument(serverUrl?: string): Json {
  // Touch the schemas so their ids are in the global registry before it is walked.
  void ZProblem;
  return {
    openapi: "3.1.0",
    info: {
      title: "Leasewatch lock API",
      version: "1.0.0",
      description:
        "Leases (distributed locks) with fencing tokens, scoped to a tenant's resource prefixes. A lease handle works only for the token that acquired it. " +
        "An Idempotency-Key retry returns the same lease on any replica. Per-token rate and concurrency limits are enforced by each API replica on its own: behind N replicas a token may get up to N times its limits.",
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    security: [{ bearer: [] }],
    paths: {
      "/v1/locks/acquire": {
        post: {
          operationId: "acquireLock",
          parameters: [{ name: "Idempotency-Key", in: "header", required: false, description: "A retry with the same key and body returns the same lease, on any replica; 409 once that lease has ended", schema: { type: "string", maxLength: 128 } }],
          requestBody: { required: true, content: json(ZAcquireBody) },
          responses: { "200": { description: "Acquired, or not (with the holder)", content: json(ZAcquireResponse) }, ...errors },
        },
      },
      "/v1/locks/{leaseId}/renew": {
        post: {
          operationId: "renewLock",
          parameters: [handleParam],
          requestBody: { required: false, content: json(ZRenewBody) },
          responses: { "200": { description: "Renewed", content: json(ZRenewResponse) }, "409": problem("Lease no longer held"), ...errors },
        },
      },
      "/v1/locks": {
        get: {
          operationId: "listLocks",
          parameters: [
            { name: "prefix", in: "query", required: false, schema: { type: "string" } },
            storeParam,
            { name: "limit", in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 1000 } },
            { name: "cursor", in: "query", required: false, schema: { type: "string" } },
          ],
          responses: { "200": { description: "Current leases under the prefix", content: json(ZListResponse) }, ...errors },
        },
      },
      // One template for both: GET reads by resource name, DELETE releases by lease handle.
      "/v1/locks/{id}": {
        get: {
          operationId: "getLock",
          parameters: [{ name: "id", in: "path", required: true, description: "Resource name, URL-encoded", schema: { type: "string" } }, storeParam],
          responses: { "200": { description: "The current lease", content: json(ZLockView) }, ...errors },
        },
        delete: {
          operationId: "releaseLock",
          parameters: [{ ...handleParam, name: "id" }],
          responses: { "200": { description: "Released", content: json(ZReleaseResponse) }, "409": problem("Lease no longer held"), ...errors },
        },
      },
      "/v1/fencing/rejections": {
        post: {
          operationId: "reportFencingRejection",
          requestBody: { required: true, content: json(ZFencingReportBody) },
          responses: { "200": { description: "Recorded", content: json(ZFencingReportResponse) }, ...errors },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: components(),
    },
  };
}
