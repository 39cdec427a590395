"use client";
import { useEffect, useRef } from "react";
import { cx } from "@/components/ui/cx";
import { FieldIssueList } from "@/components/ui/field-issue-list";
import type { Refusal } from "@/lib/console/shared/refusal-types";

const BOX = "rounded-lg border p-3 text-sm outline-none focus-visible:ring-2 focus-visible:ring-sky-500";
const TONE = {
  good: "border-emerald-300 bg-emerald-50 text-emerald-950 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-50",
  warn: "border-amber-300 bg-amber-50 text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-50",
  bad: "border-red-300 bg-red-50 text-red-950 dark:border-red-800 dark:bg-red-950 dark:text-red-50",
} as const;
export const NOTICE_LINK = "font-medium underline underline-offset-2";

/**
 * What a release did, in a box coloured by `tone`: a status when it released, an alert
 * otherwise. `takeFocus`: the control that opened the dialog may be gone with what it
 * released, so focus moves here (the next Tab reaches the audit link) each time `result`
 * changes, instead of dropping to the page body.
 */
export function ReleaseNotice({
  tone,
  result,
  takeFocus,
  testId,
  className,
  children,
}: {
  tone: keyof typeof TONE;
  result: unknown;
  takeFocus: boolean;
  testId: string;
  className?: string;
  children: React.ReactNode;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (takeFocus) ref.current?.focus();
  }, [takeFocus, result]);
  const focusProps = takeFocus ? { ref, tabIndex: -1, "data-testid": testId } : {};
  return (
    <div role={tone === "good" ? "status" : "alert"} {...focusProps} className={cx(BOX, TONE[tone], className)}>
      {children}
    </div>
  );
}

/** A refused release: `title`, the server's words, the fields it names, and a sign-in link when one is needed. */
export function RefusedRelease({ refusal, title, children }: { refusal: Refusal<string>; title: string; children?: React.ReactNode }) {
  return (
    <>
      <p className="font-semibold">{title} — nothing was released.</p>
      <p className="mt-1">{refusal.message}</p>
      <FieldIssueList issues={refusal.issues} />
      {refusal.reauthUrl ? (
        <p className="mt-1">
          <a className={NOTICE_LINK} href={refusal.reauthUrl}>
            Sign in again
          </a>{" "}
          and come back to this page.
        </p>
      ) : null}
      {children}
    </>
  );
}

/** A refusal that time or a fresh sign-in will lift reads as a warning; any other as an error. */
export function refusalTone(refusal: Refusal<string>): "warn" | "bad" {
  return refusal.code === "rate_limited" || refusal.code === "reauth_required" ? "warn" : "bad";
}
