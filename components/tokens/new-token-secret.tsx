"use client";
import Link from "next/link";
import { useEffect, useRef } from "react";
import { CopyButton } from "@/components/ui/copy-button";
import type { ApiTokenView } from "@/lib/console/tokens/token-types";
import { PRIMARY_BUTTON, tokenAuditHref } from "./access";

/**
 * The new token's secret, shown once: it lives only in this component's props
 * (never in the URL, the list, storage or the audit log). Dismissing it, or
 * reloading the page, loses it for good.
 */
export function NewTokenSecret({
  secret,
  token,
  auditId,
  auditLink,
  onDone,
}: {
  secret: string;
  token: ApiTokenView;
  auditId: string;
  /** Whether this reader's /audit lists token entries (a tenant-scoped one's does not). */
  auditLink: boolean;
  onDone: () => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <section
      aria-labelledby="new-token-title"
      className="space-y-3 rounded-lg border-2 border-amber-400 bg-amber-50 p-4 text-zinc-900 dark:border-amber-600 dark:bg-amber-950/50 dark:text-zinc-100"
    >
      <h2 id="new-token-title" ref={heading} tabIndex={-1} className="text-base font-semibold outline-none">
        Token <span className="font-mono">{token.name}</span> created — copy it now
      </h2>
      <p className="text-sm font-medium text-amber-900 dark:text-amber-200">
        You will not see this again. Only its hash is stored; if it is lost, create a new token and revoke this one.
      </p>
      <div className="flex flex-wrap items-center gap-3">
        {/* Read-only field: one click selects the whole token, and screen readers name it. */}
        <input
          readOnly
          value={secret}
          aria-label="The new API token"
          spellCheck={false}
          onFocus={(e) => e.currentTarget.select()}
          size={secret.length}
          className="max-w-full rounded-md border border-amber-300 bg-white px-3 py-2 font-mono text-sm dark:border-amber-700 dark:bg-zinc-950"
        />
        <CopyButton value={secret} label="the new API token" />
      </div>
      <p className="text-xs text-zinc-700 dark:text-zinc-300">
        Scope: <span className="font-mono">{token.prefixes.join(" ")}</span> on <span className="font-mono">{token.stores.join(", ")}</span>, actions{" "}
        <span className="font-mono">{token.actions.join(", ")}</span>. Recorded in the{" "}
        {auditLink ? (
          <Link className="underline" href={tokenAuditHref("token_create", auditId)}>
            audit log (entry {auditId})
          </Link>
        ) : (
          <>audit log (entry {auditId})</>
        )}
        .
      </p>
      <div className="flex justify-end">
        <button type="button" onClick={onDone} className={PRIMARY_BUTTON}>
          I have copied it
        </button>
      </div>
    </section>
  );
}
