"use client";
import { DANGER_BUTTON, DialogActions } from "@/components/ui/form-controls";
import { formatDuration, formatUtc } from "@/components/ui/format";
import { ModalDialog } from "@/components/ui/modal-dialog";
import { RelativeTime } from "@/components/ui/relative-time";
import { useNow } from "@/components/ui/use-now";
import type { ForceReleaseResult } from "@/lib/console/release/force-release-types";
import { useForceReleaseMutation } from "@/lib/console/release/force-release-mutation";
import type { LeaseView } from "@/lib/console/shared/views";
import { LeaseStatePill } from "@/components/locks/lease-state-pill";
import { ReleaseOutcome } from "./release-outcome";
import { ConfirmNameField, ReasonField, useReleaseForm } from "./release-fields";

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
  const mutation = useForceReleaseMutation();
  const form = useReleaseForm(mutation, lease.resource, onDone);
  return (
    <form
      onSubmit={(event) => form.send(event, { store: lease.store, resource: lease.resource, leaseId: lease.leaseId, reason: form.reason, confirm: form.confirm })}
      className="space-y-4"
      aria-label="Force release"
    >
      <LeaseFacts lease={lease} clockOffsetMs={clockOffsetMs} />
      <ReasonField value={form.reason} onChange={form.setReason} />
      <ConfirmNameField what="resource name" name={lease.resource} value={form.confirm} onChange={form.setConfirm} />
      {form.problem ? <ReleaseOutcome result={form.problem} /> : null}
      <DialogActions onCancel={onCancel}>
        <button type="submit" disabled={!form.canSubmit} className={DANGER_BUTTON}>
          {mutation.isPending ? "Releasing…" : "Force release"}
        </button>
      </DialogActions>
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
    <>
      <dl aria-label="The lease that will end" className="grid grid-cols-2 gap-x-4 gap-y-2 rounded-md border border-zinc-200 bg-zinc-50 p-3 text-sm sm:grid-cols-3 dark:border-zinc-700 dark:bg-zinc-950/60">
        {rows.map(([label, value, isMono]) => (
          <div key={label} className={label === "Resource" ? "col-span-2 min-w-0 sm:col-span-3" : label === "Lease id" ? "col-span-2 min-w-0" : "min-w-0"}>
            <dt className="text-xs text-zinc-600 dark:text-zinc-400">{label}</dt>
            <dd className={isMono ? "break-all font-mono text-[13px]" : ""}>{value}</dd>
          </div>
        ))}
      </dl>
      {expiresIn <= 0 ? (
        <p role="note" className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-50">
          Its expiry has passed. Unless the holder renewed it since, it has lapsed: there is nothing left to release, and the next acquire takes the resource over.
        </p>
      ) : null}
    </>
  );
}
