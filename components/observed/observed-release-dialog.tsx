"use client";
import Link from "next/link";
import { ConfirmNameField, ReasonField, useReleaseForm } from "@/components/release/release-fields";
import { NOTICE_LINK, RefusedRelease, refusalTone, ReleaseNotice } from "@/components/release/release-notice";
import { DANGER_BUTTON, DialogActions } from "@/components/ui/form-controls";
import { formatUtc } from "@/components/ui/format";
import { ModalDialog } from "@/components/ui/modal-dialog";
import { auditEntryHref } from "@/lib/console/release/force-release-types";
import type { ObservedReleaseResult } from "@/lib/console/observed/observed-release-types";
import { useObservedReleaseMutation } from "@/lib/console/observed/observed-release-mutation";
import type { TObservedShown } from "@/lib/observed/release-form";

export interface ObservedReleaseTarget {
  store: string;
  resource: string;
  holder: string;
  shown: TObservedShown;
}

/** What the release does, per kind, in the words the dialog uses. */
function consequence(shown: TObservedShown): { title: string; action: string; pending: string; description: string } {
  switch (shown.kind) {
    case "shedlock":
      return {
        title: "Force release this ShedLock row",
        action: "Force release",
        pending: "Releasing…",
        description: "Sets lock_until to now, as ShedLock's own unlock does, so the next scheduled run may take the row. The job still running (if any) is not stopped.",
      };
    case "redis-keys":
      return shown.type === "zset"
        ? { title: "Force release this semaphore holder", action: "Force release", pending: "Releasing…", description: "Removes this one holder from the sorted set; the other holders keep their places. The process that held it is not told." }
        : { title: "Force release this Redis lock", action: "Force release", pending: "Releasing…", description: "Deletes the key, so the next acquire takes it. The process that held it is not told, and its own release will find the key gone." };
    case "pg-advisory":
      return {
        title: "Terminate the holder of this advisory lock",
        action: "Terminate holder",
        pending: "Terminating…",
        description:
          "Postgres cannot take an advisory lock from another session: this ends the holder's whole database session (pg_terminate_backend). Every lock it holds is freed, its open transaction is rolled back, and its application loses that connection.",
      };
  }
}

function ShownFacts({ target }: { target: ObservedReleaseTarget }) {
  const s = target.shown;
  const rows: Array<[string, string]> = [
    ["Lock", target.resource],
    ["Store", target.store],
    ...(s.kind === "shedlock"
      ? ([
          ["locked_by", s.lockedBy],
          ["locked_at", formatUtc(s.lockedAt)],
        ] as Array<[string, string]>)
      : s.kind === "redis-keys"
        ? ([[s.type === "zset" ? "Member" : "Value", s.value]] as Array<[string, string]>)
        : ([
            ["Holder", target.holder],
            ["Backend pid", String(s.pid)],
            ["Backend started", formatUtc(s.backendStart)],
          ] as Array<[string, string]>)),
  ];
  return (
    <dl aria-label="The holder shown, which the server compares" className="grid grid-cols-2 gap-x-4 gap-y-2 rounded-md border border-zinc-200 bg-zinc-50 p-3 text-sm dark:border-zinc-700 dark:bg-zinc-950/60">
      {rows.map(([label, value]) => (
        <div key={label} className={label === "Lock" || label === "Value" || label === "Member" || label === "Holder" ? "col-span-2 min-w-0" : "min-w-0"}>
          <dt className="text-xs text-zinc-600 dark:text-zinc-400">{label}</dt>
          <dd className="break-all font-mono text-[13px]">{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/**
 * Force-releases one observed lock: shows the holder as sampled when the dialog
 * opened, which the server compares before it changes anything, and asks for a
 * reason and the lock's name typed again. Field problems keep the dialog open;
 * any other answer goes to `onDone`.
 */
export function ObservedReleaseDialog({ target, onClose, onDone }: { target: ObservedReleaseTarget | null; onClose: () => void; onDone: (result: ObservedReleaseResult, target: ObservedReleaseTarget) => void }) {
  const words = target ? consequence(target.shown) : null;
  return (
    <ModalDialog open={target !== null} onClose={onClose} title={words?.title ?? ""} description={words?.description}>
      {target ? <ObservedReleaseForm key={`${target.store}/${target.resource}`} target={target} onCancel={onClose} onDone={(r) => onDone(r, target)} /> : null}
    </ModalDialog>
  );
}

function ObservedReleaseForm({ target, onCancel, onDone }: { target: ObservedReleaseTarget; onCancel: () => void; onDone: (result: ObservedReleaseResult) => void }) {
  const mutation = useObservedReleaseMutation();
  const form = useReleaseForm(mutation, target.resource, onDone);
  const words = consequence(target.shown);
  return (
    <form onSubmit={(event) => form.send(event, { store: target.store, resource: target.resource, shown: target.shown, reason: form.reason })} className="space-y-4" aria-label={words.action}>
      <ShownFacts target={target} />
      <p className="text-sm text-zinc-700 dark:text-zinc-300">
        Nothing changes unless the lock still shows exactly this holder when the request arrives; if it changed, you are told and the attempt is recorded.
      </p>
      <ReasonField value={form.reason} onChange={form.setReason} />
      <ConfirmNameField what="lock name" name={target.resource} value={form.confirm} onChange={form.setConfirm} />
      {form.problem ? <ObservedReleaseOutcome result={form.problem} target={target} /> : null}
      <DialogActions onCancel={onCancel}>
        <button type="submit" disabled={!form.canSubmit} className={DANGER_BUTTON}>
          {mutation.isPending ? words.pending : words.action}
        </button>
      </DialogActions>
    </form>
  );
}

/** What the release did, with the link to its audit entry; takes focus when shown on the page. */
export function ObservedReleaseOutcome({ result, target, takeFocus = false }: { result: ObservedReleaseResult; target: ObservedReleaseTarget; takeFocus?: boolean }) {
  const auditLink =
    "auditId" in result && result.auditId ? (
      <Link className={NOTICE_LINK} href={auditEntryHref({ auditId: result.auditId, store: target.store, resource: target.resource })}>
        See the audit entry
      </Link>
    ) : null;
  const notice = { result, takeFocus, testId: "observed-release-outcome" };
  if (result.outcome === "released") {
    return (
      <ReleaseNotice tone="good" {...notice}>
        <p className="font-semibold">{result.terminated ? "Holder terminated." : "Force-released."}</p>
        <p className="mt-1">
          {result.terminated ? (
            <>
              The session <span className="font-mono">{target.holder}</span> was ended; <span className="font-mono">{target.resource}</span> and every other lock it held are free.
            </>
          ) : (
            <>
              <span className="font-mono">{target.resource}</span> is no longer held by <span className="font-mono">{target.holder}</span>.
            </>
          )}{" "}
          The page shows it at the observer&apos;s next sample. {auditLink}
        </p>
      </ReleaseNotice>
    );
  }
  if (result.outcome === "lease_changed") {
    return (
      <ReleaseNotice tone="warn" {...notice}>
        <p className="font-semibold">The holder changed — nothing was released.</p>
        <p className="mt-1">
          {result.message} Look at the lock again before deciding. {auditLink}
        </p>
      </ReleaseNotice>
    );
  }
  return (
    <ReleaseNotice tone={refusalTone(result)} {...notice}>
      <RefusedRelease refusal={result} title="Refused">
        {auditLink ? <p className="mt-1">{auditLink}</p> : null}
      </RefusedRelease>
    </ReleaseNotice>
  );
}
