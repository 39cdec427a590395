import Link from "next/link";
import type { ParamProblem, StoreOutcome } from "@/lib/console/views";

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

/** Stores this read could not reach; the rest of the page shows the others. */
export function StoreReadProblems({ stores }: { stores: ReadonlyArray<StoreOutcome<unknown>> }) {
  const failed = stores.flatMap((s) => (s.ok ? [] : [s]));
  if (failed.length === 0) return null;
  return (
    <ul role="status" className="space-y-1 rounded-lg border border-red-300 bg-red-50 px-4 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
      {failed.map((s) => (
        <li key={s.store}>
          <strong className="font-semibold">Not shown:</strong> <span className="font-mono">{s.store}</span> ({s.kind}) could not be read — {s.error}
        </li>
      ))}
    </ul>
  );
}
