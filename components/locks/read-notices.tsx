import Link from "next/link";
import type { PageSummary, ParamProblem, StoreOutcome } from "@/lib/console/shared/views";

/**
 * A bad URL parameter, said plainly, with a way back. Pages render this instead
 * of reading anything (nothing is queried with a parameter we could not parse).
 */
export function ParamProblemNotice({ problem, resetHref, what }: { problem: ParamProblem; resetHref: string; what: string }) {
  return (
    <div role="alert" className="rounded-lg border border-amber-300 bg-amber-50 p-4 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100">
      <p className="font-semibold">Can’t show {what}.</p>
      {/* The message is a whole sentence naming the parameter (see toProblemSentence). */}
      <p className="mt-1">{problem.message}</p>
      <p className="mt-2">
        Fix the link, or{" "}
        <Link href={resetHref} className="font-medium underline underline-offset-2">
          start again without filters
        </Link>
        .
      </p>
    </div>
  );
}

/**
 * The user's read rate is spent (lib/console/shared/api-response.ts): the page renders this
 * instead of reading; the navigation around it still works.
 */
export function ReadLimitNotice({ retryAfterSeconds }: { retryAfterSeconds: number }) {
  return (
    <div role="alert" className="rounded-lg border border-amber-300 bg-amber-50 p-4 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100">
      <p className="font-semibold">Too many requests from your account.</p>
      <p className="mt-1">Wait {retryAfterSeconds} s, then reload this page.</p>
    </div>
  );
}

/**
 * Stores this read could not count or reach; the rest of the page shows the others. A store that
 * refused the read (it would pass its bound) is "not counted", never "down": it answered.
 */
export function StoreReadProblems({ stores }: { stores: ReadonlyArray<StoreOutcome<unknown>> }) {
  const failed = stores.flatMap((s) => (s.ok ? [] : [s]));
  if (failed.length === 0) return null;
  const isRefusalOnly = failed.every((s) => s.cause === "refused");
  return (
    // A live region around the list, not on it: role="status" on the <ul> would stop it being a list.
    <div
      role="status"
      data-testid="store-read-problems"
      className={
        isRefusalOnly
          ? "rounded-lg border border-amber-300 bg-amber-50 px-4 py-2 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
          : "rounded-lg border border-red-300 bg-red-50 px-4 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
      }
    >
      <ul className="space-y-1">
        {failed.map((s) => (
          <li key={s.store}>
            {s.cause === "refused" ? (
              <>
                <strong className="font-semibold">Not counted:</strong> <span className="font-mono">{s.store}</span> ({s.kind}) — {s.error}
              </>
            ) : (
              <>
                <strong className="font-semibold">Not shown:</strong> <span className="font-mono">{s.store}</span> ({s.kind}) could not be read — {s.error}
              </>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * Stores that answered only in part: their rows are right, but there may be more the store
 * did not look for (it stopped at its read budget, or its index does not reach that far back).
 * Said plainly, so a short list is never taken for the whole answer.
 */
export function PartialReadNotice({
  stores,
  noun,
  narrowing = "narrow by prefix, owner or task, or choose a shorter window",
}: {
  stores: ReadonlyArray<StoreOutcome<PageSummary>>;
  noun: string;
  /** What the reader can change to get a whole answer. */
  narrowing?: string;
}) {
  const partial = stores.flatMap((s) => (s.ok && s.data.partial ? [{ store: s.store, count: s.data.count, partial: s.data.partial }] : []));
  if (partial.length === 0) return null;
  return (
    <div role="status" data-testid="partial-read" className="rounded-lg border border-amber-300 bg-amber-50 px-4 py-2 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100">
      <ul className="space-y-1">
        {partial.map(({ store, count, partial: p }) => (
          <li key={store}>
            <strong className="font-semibold">Partial:</strong> <span className="font-mono">{store}</span>{" "}
            {p.reason === "read_budget"
              ? `stopped after examining ${p.examined.toLocaleString("en-US")} entries; ${count === 0 ? `it found no matching ${noun} in them.` : `showing the first ${count} ${noun} it found.`}`
              : p.reason === "index_building"
                ? `is still indexing its earlier events by owner and task, so the newest may be missing; showing the first ${count} ${noun} it has indexed.`
                : `keeps only the newest events of each owner, task and resource in its index; showing the first ${count} ${noun} it holds.`}{" "}
            There may be more: {narrowing}.
          </li>
        ))}
      </ul>
    </div>
  );
}
