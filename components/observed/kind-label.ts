import type { TObservedConfig } from "@/lib/observed/config";

/** What an observed store holds, in words. */
export const OBSERVED_KIND_LABEL: Record<TObservedConfig["kind"], string> = {
  "pg-advisory": "Postgres advisory locks",
  shedlock: "ShedLock table",
  "redis-keys": "Redis lock keys",
};
