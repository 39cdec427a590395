// The checks live beside the library so the demo's history backfill can run them too.
export * from "@/lib/lease/testing/history-checks";
