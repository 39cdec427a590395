import type { FieldIssue } from "@/lib/console/shared/refusal-types";

/** The form fields a refusal names, each with what is wrong with it; nothing when it names none. */
export function FieldIssueList({ issues }: { issues: readonly FieldIssue[] | undefined }) {
  if (!issues || issues.length === 0) return null;
  return (
    <ul className="mt-1 list-disc pl-5">
      {issues.map((issue) => (
        <li key={`${issue.field}:${issue.message}`}>
          <span className="font-mono">{issue.field}</span>: {issue.message}
        </li>
      ))}
    </ul>
  );
}
