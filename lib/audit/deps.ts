import type { LeaseStore } from "@leasewatch/lease";
import type { TObservedConfig } from "@/lib/observed/config";
import type { RecordAfter } from "@/lib/observed/observer";
import type { TStoreConfig } from "@/lib/server/store-config";
import type { AuditLog } from "./log";

/** A store the audited release can reach, with its configuration when it came from the registry. */
export interface AuditTarget {
  store: LeaseStore;
  config?: TStoreConfig;
}

/** What the audited release runs against; the console's defaults come from ./context (defaultAuditDeps). */
export interface AuditDeps {
  /** The audit log, migrated. Throws (with a message for the operator) when it is not configured or reachable. */
  getAuditLog(): Promise<AuditLog>;
  getTarget(store: string): AuditTarget | undefined;
  /** How long a `requested` entry may stay open before another caller resolves it from the store's events. */
  pendingGraceMs?: number;
}

/** What the audited force-release of an observed lock runs against (./observed-release.ts). */
export interface ObservedReleaseDeps {
  getAuditLog(): Promise<AuditLog>;
  getObserved(store: string): TObservedConfig | undefined;
  /**
   * The observer's record of one lock after an instant (lib/observed/observer.ts
   * readRecordAfter), for resolving `requested` entries a crash left open; without
   * it such entries are closed as unknown.
   */
  readRecordAfter?(query: { store: string; resource: string; after: Date }): Promise<RecordAfter>;
  /** How long a `requested` entry may stay open before it is resolved (DEFAULT_PENDING_GRACE_MS). */
  pendingGraceMs?: number;
}
