"use client";
import Link from "next/link";
import { auditEntryHref, type ForceReleaseResult } from "@/lib/console/release/force-release-types";
import type { RefusalCode } from "@/lib/console/shared/refusal-types";
import { leaseHref } from "@/lib/console/shared/links";
import { NOTICE_LINK, RefusedRelease, refusalTone, ReleaseNotice } from "./release-notice";

/**
 * What a force-release did, in words, with the link to its audit entry. `takeFocus`: the
 * control that opened the dialog may be gone with the lease, so focus moves here.
 */
export function ReleaseOutcome({ result, className, takeFocus = false }: { result: ForceReleaseResult; className?: string; takeFocus?: boolean }) {
  const notice = { result, takeFocus, className, testId: "release-outcome" };
  if (result.outcome === "released") {
    return (
      <ReleaseNotice tone="good" {...notice}>
        <p className="font-semibold">Force-released.</p>
        <p className="mt-1">
          The lease of <span className="font-mono">{result.released.owner}</span> (task <span className="font-mono">{result.released.task}</span>, token{" "}
          <span className="font-mono">{result.released.fencingToken}</span>) on <span className="font-mono">{result.resource}</span> has ended; its next renewal will
          fail and its fenced writes will be refused.{" "}
          <Link className={NOTICE_LINK} href={auditEntryHref(result)}>
            See the audit entry
          </Link>
        </p>
      </ReleaseNotice>
    );
  }
  if (result.outcome === "lease_changed") {
    return (
      <ReleaseNotice tone="warn" {...notice}>
        <p className="font-semibold">The lease changed — nothing was released.</p>
        {result.current ? (
          <p className="mt-1">
            <span className="font-mono">{result.resource}</span> is now held by <span className="font-mono">{result.current.owner}</span> (task{" "}
            <span className="font-mono">{result.current.task}</span>, lease id <span className="font-mono">{result.current.leaseId}</span>, token{" "}
            <span className="font-mono">{result.current.fencingToken}</span>). Look at the new holder before deciding again.
          </p>
        ) : (
          <p className="mt-1">
            Nobody holds <span className="font-mono">{result.resource}</span> any more: the lease was released, or lapsed, before the release reached the
            store. A lapsed lease needs no release: the next acquire takes the resource over and records its expiry.
          </p>
        )}
        <p className="mt-1">
          <Link className={NOTICE_LINK} href={auditEntryHref(result)}>
            See the audit entry
          </Link>
          {" · "}
          <Link className={NOTICE_LINK} href={leaseHref(result.store, result.resource)}>
            Open the lease
          </Link>
        </p>
      </ReleaseNotice>
    );
  }
  return (
    <ReleaseNotice tone={refusalTone(result)} {...notice}>
      <RefusedRelease refusal={result} title={REFUSAL_TITLE[result.code]} />
    </ReleaseNotice>
  );
}

const REFUSAL_TITLE: Record<RefusalCode, string> = {
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
