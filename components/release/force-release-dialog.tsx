"use client";
import { useId, useState } from "react";
import { formatDuration, formatUtc } from "@/components/ui/format";
import { ModalDialog } from "@/components/ui/modal-dialog";
import { RelativeTime } from "@/components/ui/relative-time";
import { useNow } from "@/components/ui/use-now";
import { MAX_REASON_CHARS, MIN_REASON_CHARS, type ForceReleaseResult } from "@/lib/actions/force-release-types";
import { useForceReleaseMutation } from "@/lib/console/queries/release/force-release-mutation";
import type { LeaseView } from "@/lib/console/views";
import { LeaseStatePill } from "@/components/locks/lease-state-pill";
import { ReleaseOutcome } from "./release-outcome";

export const FIELD = "block w-full rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-600 dark:bg-zinc-950";
export const LABEL = "block text-sm font-medium";
export const DANGER_BUTTON =
  "rounded-md bg-red-700 px-3 py-1.5 text-sm font-semibold text-white hover:bg-red-800 disabled:cursor-not-allowed disabled:opacity-50 dark:bg-red-600 dark:hover:bg-red-500";
export const PLAIN_BUTTON = "rounded-md px-3 py-1.5 text-sm font-medium text-zinc-700 hover:bg-zinc-100 dark:text-zinc-200 dark:hover:bg-zinc-800";

/**
 * Ends one lease. Shows exactly the lease that will end — the snapshot taken when
 * the dialog opened, which the server checks by lease id — and asks for a reason
 * and the resource name typed again. A refusal with field problems keeps the
 * dialog open; any other answer goes to `onDone` for the page to show.
 */
export function ForceReleaseDialog({
  lease,
  clockOffsetMs,
  open,
  onClose,
  onDone,
}: {
  lease: LeaseView;
  clockOffsetMs: number;
  open: boolean;
  onClose: () => void;
  onDone: (result: ForceReleaseResult) => void;
}) {
  return (
    <ModalDialog
      open={open}
      onClose={onClose}
      title="Force release this lease"
      description="The holder's next renewal fails, its work is told to stop, and its fenced writes are refused. Live updates are paused while this is open."
    >
      {open ? <ForceReleaseForm lease={lease} clockOffsetMs={clockOffsetMs} onCancel={onClose} onDone={onDone} /> : null}
    </ModalDialog>
  );
}

function ForceReleaseForm({
  lease,
  clockOffsetMs,
  onCancel,
  onDone,
}: {
  lease: LeaseView;
  clockOffsetMs: number;
  onCancel: () => void;
  onDone: (result: ForceReleaseResult) => void;
}) {
  const reasonId = useId();
  const confirmId = useId();
  const [reason, setReason] = useState("");
  const [confirm, setConfirm] = useState("");
  const [problem, setProblem] = useState<ForceReleaseResult | null>(null);
  const mutation = useForceReleaseMutation();
  const reasonLength = reason.trim().length;
  const isReasonOk = reasonLength >= MIN_REASON_CHARS && reasonLength <= MAX_REASON_CHARS;
  const isConfirmOk = confirm === lease.resource;

  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    if (mutation.isPending) return;
    mutation.mutate(
      { store: lease.store, resource: lease.resource, leaseId: lease.leaseId, reason, confirm },
      {
        onSuccess: (result) => {
          if (result.outcome === "refused" && result.code === "invalid_input") setProblem(result);
          else onDone(result);
        },
      },
    );
  };

  return (
    <form onSubmit={submit} className="space-y-4" aria-label="Force release">
      <LeaseFacts lease={lease} clockOffsetMs={clockOffsetMs} />
      <div>
        <label htmlFor={reasonId} className={LABEL}>
          Reason <span className="font-normal text-zinc-600 dark:text-zinc-400">({MIN_REASON_CHARS}–{MAX_REASON_CHARS} characters, kept in the audit log)</span>
        </label>
        <textarea
          id={reasonId}
          name="reason"
          required
          minLength={MIN_REASON_CHARS}
          maxLength={MAX_REASON_CHARS}
          rows={3}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          aria-describedby={`${reasonId}-count`}
          className={`${FIELD} mt-1`}
        />
        <p id={`${reasonId}-count`} className="mt-1 text-xs text-zinc-600 dark:text-zinc-400" aria-live="polite">
          {reasonLength < MIN_REASON_CHARS ? `${MIN_REASON_CHARS - reasonLength} more characters needed` : `${reasonLength} / ${MAX_REASON_CHARS}`}
        </p>
      </div>
      <div>
        <label htmlFor={confirmId} className={LABEL}>
          Type the resource name to confirm: <span className="break-all font-mono font-normal">{lease.resource}</span>
        </label>
        <input
          id={confirmId}
          name="confirm"
          autoComplete="off"
          spellCheck={false}
          value={confirm}
          onChange={(e) => setConfirm(e.target.value)}
          className={`${FIELD} mt-1 font-mono`}
        />
      </div>
      {problem ? <ReleaseOutcome result={problem} /> : null}
      <div className="flex justify-end gap-2">
        <button type="button" onClick={onCancel} className={PLAIN_BUTTON}>
          Cancel
        </button>
        <button type="submit" disabled={!isReasonOk || !isConfirmOk || mutation.isPending} className={DANGER_BUTTON}>
          {mutation.isPending ? "Releasing…" : "Force release"}
        </button>
      </div>
    </form>
  );
}

/** The lease as it was when the dialog opened; times keep ticking on the store's clock. */
function LeaseFacts({ lease, clockOffsetMs }: { lease: LeaseView; clockOffsetMs: number }) {
  const now = useNow() + clockOffsetMs;
  const expiresIn = Date.parse(lease.expiresAt) - now;
  const rows: Array<[string, React.ReactNode, boolean?]> = [
    ["Resource", lease.resource, true],
    ["Store", lease.store, true],
    ["Lease id", lease.leaseId, true],
    ["Owner", lease.owner, true],
    ["Task", lease.task, true],
    ["Fencing token", lease.fencingToken, true],
    ["Held for", <span key="h" title={`acquired ${formatUtc(lease.acquiredAt)}`}>{formatDuration(Math.max(0, now - Date.parse(lease.acquiredAt)))}</span>],
    [
      "Expires in",
      <span key="e" title={formatUtc(lease.expiresAt)}>
        {expiresIn > 0 ? formatDuration(expiresIn) : `lapsed ${formatDuration(-expiresIn)} ago`}
      </span>,
    ],
    ["Last renewed", lease.renewals === 0 ? "never (since acquired)" : <RelativeTime key="r" value={lease.renewedAt} clockOffsetMs={clockOffsetMs} />],
    ["State", <LeaseStatePill key="s" state={lease.state} />],
  ];
  return (
    <dl aria-label="The lease that will end" className="grid grid-cols-3 gap-x-4 gap-y-2 rounded-md border border-zinc-200 bg-zinc-50 p-3 text-sm dark:border-zinc-700 dark:bg-zinc-950/60">
      {rows.map(([label, value, isMono]) => (
        <div key={label} className={label === "Resource" ? "col-span-3 min-w-0" : label === "Lease id" ? "col-span-2 min-w-0" : "min-w-0"}>
          <dt className="text-xs text-zinc-600 dark:text-zinc-400">{label}</dt>
          <dd className={isMono ? "break-all font-mono text-[13px]" : ""}>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
