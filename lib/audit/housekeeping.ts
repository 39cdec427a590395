import { defaultAuditDeps, defaultObservedReleaseDeps } from "./context";
import { resolvePendingObservedReleases } from "./observed-release";
import { resolvePendingForceReleases, DEFAULT_PENDING_GRACE_MS, type ResolveResult } from "./force-release";
import { runInBackgroundRun } from "@/lib/log/context";
import { getLogger } from "@/lib/log/logger";

/**
 * At console start-up: give entries a crashed process left `requested` their
 * outcome. Entries younger than the grace period may still be in flight in
 * another replica, so a second pass runs once that has passed. Resolves with
 * the first pass (never rejects: problems are logged).
 */
export function startAuditHousekeeping(options: { graceMs?: number } = {}): Promise<ResolveResult | null> {
  const graceMs = options.graceMs ?? DEFAULT_PENDING_GRACE_MS;
  // Each pass is one background run: its lines share a runId.
  const run = () =>
    runInBackgroundRun(async () => {
      const leases = await resolvePendingForceReleases({ ...defaultAuditDeps(), pendingGraceMs: graceMs });
      // Observed locks' entries (the lease resolver leaves them open: no lease store by that name).
      const observed = await resolvePendingObservedReleases({ ...defaultObservedReleaseDeps(), pendingGraceMs: graceMs });
      const isObserved = new Set(observed.resolved.map((r) => r.id));
      return { resolved: [...leases.resolved, ...observed.resolved], open: leases.open.filter((id) => !isObserved.has(id)) };
    })
      .then((result) => {
        if (result.resolved.length > 0) getLogger("audit").info({ resolved: result.resolved.length }, "recorded the outcome of open force-release entries");
        if (result.open.length > 0) getLogger("audit").warn({ open: result.open.length }, "force-release entries stay open (their store is not answering)");
        return result;
      })
      .catch((error: unknown) => {
        getLogger("audit").error({ error: error instanceof Error ? error.message : String(error) }, "resolving open force-release entries failed");
        return null;
      });
  setTimeout(() => void run(), graceMs + 1_000).unref();
  return run();
}
