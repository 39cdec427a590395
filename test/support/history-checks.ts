// The checks live beside the library so the demo's history backfill can run them too.
export {
  type AcceptedWrite,
  findForeignFencingRejections,
  findHistoryViolations,
  findHoldViolations,
  findRepeatedEnds,
  findStaleWrites,
  findTokenOrderViolations,
  type HoldOnRecord,
  holdsOnRecord,
} from "@leasewatch/lease/testing";
