import { FieldIssueList } from "@/components/ui/field-issue-list";
import type { TokenRefusal } from "@/lib/console/tokens/token-types";

/** What the server refused and why, in words; the field issues listed; a sign-in link when one is needed. */
export function RefusalNotice({ refusal }: { refusal: TokenRefusal }) {
  return (
    <div role="alert" className="rounded-md border border-red-300 bg-red-50 p-3 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
      <p className="font-semibold">{refusal.message}</p>
      <FieldIssueList issues={refusal.issues} />
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
