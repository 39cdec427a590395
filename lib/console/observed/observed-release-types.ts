/**
 * What POST /api/observed/release answers (client-safe, dependency-free). Same
 * refusal codes as the lease force-release, plus `not_releasable`: the store is
 * observed read-only (no releaseUrl) or cannot release that lock.
 */
import type { Refusal, RefusalCode } from "@/lib/console/shared/refusal-types";

export type ObservedRefusalCode = RefusalCode | "not_releasable";
export type ObservedRefusal = Refusal<ObservedRefusalCode>;

export type ObservedReleaseResult =
  | { ok: true; outcome: "released"; store: string; resource: string; auditId: string; terminated: boolean }
  | { ok: false; outcome: "lease_changed"; store: string; resource: string; auditId: string; message: string }
  | ObservedRefusal;
