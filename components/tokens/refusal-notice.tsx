import type { TokenRefusal } from "@/lib/actions/api-token-types";

/** What the server refused and why, in words; the field issues listed; a sign-in link when one is needed. */
export function RefusalNotice({ refusal }: { refusal: TokenRefusal }) {
  return (
    <div role="alert" className="rounded-md border border-red-300 bg-red-50 p-3 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
      <p className="font-semibold">{refusal.message}</p>
      {refusal.issues && refusal.issues.length > 0 ? (
        <ul className="mt-1 list-disc pl-5">
          {refusal.issues.map((issue) => (
            <li key={`${issue.field}:${issue.message}`}>
              <span className="font-mono">{issue.field}</span>: {issue.message}
            </li>
          ))}
        </ul>
      ) : null}
      {refusal.reauthUrl ? (
        <p className="mt-1">
          <a className="underline" href={refusal.reauthUrl}>
            Sign in again
          </a>{" "}
          and come back here.
        </p>
      ) : null}
      {refusal.auditId ? <p className="mt-1 text-xs">Recorded in the audit log as entry {refusal.auditId}.</p> : null}
    </div>
  );
}
