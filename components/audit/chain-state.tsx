import { RelativeTime } from "@/components/ui/relative-time";
import type { ChainStatus } from "@/lib/audit/chain-status";

const PROBLEM_WORDS = { changed: "changed", removed: "an entry before it removed", reordered: "out of order" } as const;
const LISTED = 10;

/**
 * The hash chain's state in words, so an operator sees a break without a shell.
 * A scoped reader gets the state without entry numbers (those would tell how
 * many entries other tenants have).
 */
export function ChainStateNotice({ status, showIds }: { status: ChainStatus | null; showIds: boolean }) {
  if (status === null) {
    return (
      <p data-testid="audit-chain-state" className="text-sm text-amber-800 dark:text-amber-300">
        The audit chain could not be checked just now; <code className="font-mono">npm run audit:verify</code> checks it from a shell.
      </p>
    );
  }
  const checked = (
    <>
      checked <RelativeTime value={status.checkedAt} />
    </>
  );
  if (status.ok) {
    const through = status.through === null ? "no entries yet" : showIds ? `verified through #${status.through.id}` : "verified";
    return (
      <p data-testid="audit-chain-state" className="text-sm text-emerald-800 dark:text-emerald-300">
        Audit chain intact: {through}
        {status.complete ? "" : " so far (checking continues)"}, {checked}.
      </p>
    );
  }
  const entries = status.failureCount === 1 ? "1 entry fails" : `${status.failureCount} entries fail`;
  return (
    <div data-testid="audit-chain-state" role="alert" className="rounded-lg border border-red-300 bg-red-50 p-3 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
      <p className="font-semibold">
        Audit chain BROKEN: {entries} verification ({checked}).
      </p>
      {showIds ? (
        <ul className="mt-1 list-disc pl-5">
          {status.failures.slice(0, LISTED).map((f) => (
            <li key={`${f.entryId}-${f.problem}`}>
              #{f.entryId}: {PROBLEM_WORDS[f.problem]}
            </li>
          ))}
        </ul>
      ) : null}
      <p className="mt-1">
        Run <code className="font-mono">npm run audit:verify</code> for the full list{showIds && status.failureCount > LISTED ? ` (${status.failureCount - LISTED} more not shown here)` : ""}.
      </p>
    </div>
  );
}
