"use client";
import Link from "next/link";
import { auditEntryHref, type ForceReleaseResult } from "@/lib/actions/force-release-types";
import { leaseHref } from "@/lib/console/links";
import { cx } from "@/components/ui/cx";

const BOX = "rounded-lg border p-3 text-sm";
const GOOD = "border-emerald-300 bg-emerald-50 text-emerald-950 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-50";
const WARN = "border-amber-300 bg-amber-50 text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-50";
const BAD = "border-red-300 bg-red-50 text-red-950 dark:border-red-800 dark:bg-red-950 dark:text-red-50";
const LINK = "font-medium underline underline-offset-2";

/** What a force-release did, in words, with the link to its audit entry. */
export function ReleaseOutcome({ result, className }: { result: ForceReleaseResult; className?: string }) {
  if (result.outcome === "released") {
    return (
      <div role="status" className={cx(BOX, GOOD, className)}>
        <p className="font-semibold">Force-released.</p>
        <p className="mt-1">
          The lease of <span className="font-mono">{result.released.owner}</span> (task <span className="font-mono">{result.released.task}</span>, token{" "}
          <span className="font-mono">{result.released.fencingToken}</span>) on <span className="font-mono">{result.resource}</span> has ended; its next renewal will
          fail and its fenced writes will be refused.{" "}
          <Link className={LINK} href={auditEntryHref(result)}>
            See the audit entry
          </Link>
        </p>
      </div>
    );
  }
  if (result.outcome === "lease_changed") {
    return (
      <div role="alert" className={cx(BOX, WARN, className)}>
        <p className="font-semibold">The lease changed — nothing was released.</p>
        {result.current ? (
          <p className="mt-1">
            <span className="font-mono">{result.resource}</span> is now held by <span className="font-mono">{result.current.owner}</span> (task{" "}
            <span className="font-mono">{result.current.task}</span>, lease id <span className="font-mono">{result.current.leaseId}</span>, token{" "}
            <span className="font-mono">{result.current.fencingToken}</span>). Look at the new holder before deciding again.
          </p>
        ) : (
          <p className="mt-1">
            Nobody holds <span className="font-mono">{result.resource}</span> any more: the lease ended (or lapsed) before the release reached the store.
          </p>
        )}
        <p className="mt-1">
          <Link className={LINK} href={auditEntryHref(result)}>
            See the audit entry
          </Link>
          {" · "}
          <Link className={LINK} href={leaseHref(result.store, result.resource)}>
            Open the lease
          </Link>
        </p>
      </div>
    );
  }
  return (
    <div role="alert" className={cx(BOX, result.code === "rate_limited" || result.code === "reauth_required" ? WARN : BAD, className)}>
      <p className="font-semibold">{REFUSAL_TITLE[result.code]} — nothing was released.</p>
      <p className="mt-1">{result.message}</p>
      {result.issues && result.issues.length > 0 ? (
        <ul className="mt-1 list-disc pl-5">
          {result.issues.map((issue) => (
            <li key={`${issue.field}:${issue.message}`}>
              <span className="font-mono">{issue.field}</span>: {issue.message}
            </li>
          ))}
        </ul>
      ) : null}
      {result.reauthUrl ? (
        <p className="mt-1">
          <a className={LINK} href={result.reauthUrl}>
            Sign in again
          </a>{" "}
          and come back to this page.
        </p>
      ) : null}
    </div>
  );
}

const REFUSAL_TITLE: Record<Extract<ForceReleaseResult, { outcome: "refused" }>["code"], string> = {
  not_signed_in: "You are signed out",
  forbidden: "Not allowed",
  reauth_required: "Sign in again to do this",
  idp_unavailable: "Your role could not be confirmed",
  cross_origin: "Refused",
  rate_limited: "Too many force-releases",
  invalid_input: "Check the form",
  audit_unavailable: "The audit log is unavailable",
  failed: "The force-release failed",
};
