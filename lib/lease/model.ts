/**
 * `@leasewatch/lease/model`: the lease model's types and constants and the pure helpers
 * that go with them, for browser bundles. Nothing here imports zod, a `node:` module or a
 * store driver; the same names are exported by `@leasewatch/lease`.
 */
export * from "./types";
export { resourcePrefix } from "./resource-prefix";
export { holdBucketIndex, histogramQuantile } from "./histogram";
