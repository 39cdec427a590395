"use client";
import Link from "next/link";
import { useId, useState } from "react";
import { DataTable, TBody, Td, Tr, TableHeader } from "@/components/ui/data-table";
import { formatDuration } from "@/components/ui/format";
import { ModalDialog } from "@/components/ui/modal-dialog";
import { auditEntryHref, MAX_BULK_LEASES, MAX_REASON_CHARS, MIN_REASON_CHARS, type BulkLeaseOutcome, type BulkReleaseResult } from "@/lib/console/release/force-release-types";
import { leaseHref } from "@/lib/console/shared/links";
import type { ReleaseCandidatesView } from "@/lib/console/release/list-release-candidates";
import type { Refusal } from "@/lib/console/shared/refusal-types";
import { useReleaseCandidatesQuery } from "@/lib/console/release/candidates-query";
import { useBulkReleaseMutation } from "@/lib/console/release/force-release-mutation";
import { LeaseStatePill } from "@/components/locks/lease-state-pill";
import { StatusPill } from "@/components/ui/status-pill";
import { DANGER_BUTTON, FIELD, LABEL, PLAIN_BUTTON, DialogActions } from "@/components/ui/form-controls";
import { ReleaseOutcome } from "./release-outcome";
import { ConfirmNameField, isReasonLengthOk } from "./release-fields";

/**
 * Ends every lapsed or overdue lease under a prefix: lists the exact leases (read
 * once when the dialog opens, at most MAX_BULK_LEASES), asks for a reason and the
 * prefix typed again, then shows what happened to each lease. The server checks
 * every lease again (still lapsed or overdue, same lease id) and audits each.
 */
export function BulkReleaseDialog({ prefix, store, open, onClose }: { prefix: string; store: string | null; open: boolean; onClose: () => void }) {
  return (
    <ModalDialog
      open={open}
      onClose={onClose}
      className="max-w-4xl"
      title="Force release lapsed and overdue leases"
      description={
        <>
          Under the prefix <span className="font-mono">{prefix}</span>
          {store ? (
            <>
              {" "}in store <span className="font-mono">{store}</span>
            </>
          ) : null}
          : leases whose TTL ran out but are not swept yet, and leases not renewed for over two thirds of their TTL. Healthy leases are never included. Live updates are paused while this is open.
        </>
      }
    >
      {open ? <BulkReleaseBody prefix={prefix} store={store} onClose={onClose} /> : null}
    </ModalDialog>
  );
}

function BulkReleaseBody({ prefix, store, onClose }: { prefix: string; store: string | null; onClose: () => void }) {
  const candidates = useReleaseCandidatesQuery(prefix, store, { enabled: true });
  const mutation = useBulkReleaseMutation();
  const [result, setResult] = useState<BulkReleaseResult | null>(null);

  if (result?.outcome === "done") {
    return (
      <div className="space-y-4">
        <BulkResults results={result.results} />
        <CloseButton onClose={onClose} />
      </div>
    );
  }
  if (candidates.isPending) return <p className="text-sm text-zinc-600 dark:text-zinc-400">Reading the leases under this prefix…</p>;
  if (candidates.isError) return <p role="alert" className="text-sm text-red-800 dark:text-red-200">The leases could not be read: {candidates.error.message}</p>;
  const view = candidates.data;
  if (view.items.length === 0) {
    return (
      <div className="space-y-4">
        <p className="text-sm">
          No lease under <span className="font-mono">{prefix}</span> is lapsed or overdue right now: there is nothing to release.
        </p>
        <StoreProblems view={view} />
        <CloseButton onClose={onClose} />
      </div>
    );
  }
  return (
    <BulkReleaseForm
      view={view}
      isPending={mutation.isPending}
      refusal={result && result.outcome === "refused" ? result : null}
      onCancel={onClose}
      onSubmit={(reason, confirm) =>
        mutation.mutate(
          { prefix, reason, confirm, leases: view.items.map((l) => ({ store: l.store, resource: l.resource, leaseId: l.leaseId })) },
          { onSuccess: setResult },
        )
      }
    />
  );
}

function CloseButton({ onClose }: { onClose: () => void }) {
  return (
    <div className="flex justify-end">
      <button type="button" onClick={onClose} className={PLAIN_BUTTON}>
        Close
      </button>
    </div>
  );
}

function StoreProblems({ view }: { view: ReleaseCandidatesView }) {
  const down = view.stores.filter((s) => !s.ok);
  if (down.length === 0) return null;
  return (
    <p role="alert" className="text-sm text-amber-800 dark:text-amber-300">
      Not read (store down): {down.map((s) => s.store).join(", ")}. Leases there are not listed and will not be released.
    </p>
  );
}

function BulkReleaseForm({
  view,
  isPending,
  refusal,
  onCancel,
  onSubmit,
}: {
  view: ReleaseCandidatesView;
  isPending: boolean;
  refusal: Refusal | null;
  onCancel: () => void;
  onSubmit: (reason: string, confirm: string) => void;
}) {
  const reasonId = useId();
  const [reason, setReason] = useState("");
  const [confirm, setConfirm] = useState("");
  const canSubmit = isReasonLengthOk(reason) && confirm === view.prefix && !isPending;
  return (
    <form
      aria-label="Bulk force release"
      className="space-y-4"
      onSubmit={(e) => {
        e.preventDefault();
        if (canSubmit) onSubmit(reason, confirm);
      }}
    >
      <p className="text-sm font-medium">
        {view.items.length} {view.items.length === 1 ? "lease" : "leases"} will end
        {view.hasMore ? ` (the first ${MAX_BULK_LEASES}; more match — run it again afterwards)` : ""}:
      </p>
      <div className="max-h-64 overflow-y-auto">
        <DataTable caption="Leases that will end">
          <TableHeader columns={["Resource", "State", "Store", "Owner", "Task", { label: "Token", align: "right" }, "Lease id", { label: "Since renewal", align: "right" }]} />
          <TBody>
            {view.items.map((l) => (
              <Tr key={`${l.store}\u0000${l.resource}`}>
                <Td mono className="max-w-64 truncate" title={l.resource}>{l.resource}</Td>
                <Td>
                  <LeaseStatePill state={l.state} />
                </Td>
                <Td mono>{l.store}</Td>
                <Td mono className="max-w-36 truncate" title={l.owner}>{l.owner}</Td>
                <Td mono className="max-w-28 truncate" title={l.task}>{l.task}</Td>
                <Td mono align="right">{l.fencingToken}</Td>
                <Td mono className="max-w-28 truncate" title={l.leaseId}>{l.leaseId}</Td>
                <Td align="right" className="tabular-nums">{formatDuration(l.sinceRenewalMs)}</Td>
              </Tr>
            ))}
          </TBody>
        </DataTable>
      </div>
      <StoreProblems view={view} />
      <div>
        <label htmlFor={reasonId} className={LABEL}>
          Reason <span className="font-normal text-zinc-600 dark:text-zinc-400">({MIN_REASON_CHARS}–{MAX_REASON_CHARS} characters, kept in each lease&apos;s audit entry)</span>
        </label>
        <textarea id={reasonId} name="reason" rows={2} required maxLength={MAX_REASON_CHARS} value={reason} onChange={(e) => setReason(e.target.value)} className={`${FIELD} mt-1`} />
      </div>
      <ConfirmNameField what="prefix" name={view.prefix} value={confirm} onChange={setConfirm} />
      {refusal ? <ReleaseOutcome result={refusal} /> : null}
      <DialogActions onCancel={onCancel}>
        <button type="submit" disabled={!canSubmit} className={DANGER_BUTTON}>
          {isPending ? "Releasing…" : `Force release ${view.items.length} ${view.items.length === 1 ? "lease" : "leases"}`}
        </button>
      </DialogActions>
    </form>
  );
}

function BulkResults({ results }: { results: BulkLeaseOutcome[] }) {
  const released = results.filter((r) => r.result.outcome === "released").length;
  return (
    <div className="space-y-3">
      <p role="status" className="text-sm font-medium">
        {released} of {results.length} {results.length === 1 ? "lease" : "leases"} force-released.
      </p>
      <div className="max-h-80 overflow-y-auto">
        <DataTable caption="What happened to each lease">
          <TableHeader columns={["Resource", "Store", "Outcome", "Details"]} />
          <TBody>
            {results.map(({ store, resource, result }) => (
              <Tr key={`${store}\u0000${resource}`}>
                <Td mono className="max-w-64 truncate" title={resource}>
                  <Link href={leaseHref(store, resource)} className="text-sky-700 underline-offset-4 hover:underline dark:text-sky-300">
                    {resource}
                  </Link>
                </Td>
                <Td mono>{store}</Td>
                <Td>
                  <BulkOutcomePill result={result} />
                </Td>
                <Td className="max-w-96">
                  <BulkOutcomeDetail result={result} />
                </Td>
              </Tr>
            ))}
          </TBody>
        </DataTable>
      </div>
    </div>
  );
}

function BulkOutcomePill({ result }: { result: BulkLeaseOutcome["result"] }) {
  if (result.outcome === "released") return <StatusPill tone="green" label="released" />;
  if (result.outcome === "lease_changed") return <StatusPill tone="amber" label={result.current ? "lease changed" : "already ended"} />;
  return <StatusPill tone="red" label="refused" />;
}

function BulkOutcomeDetail({ result }: { result: BulkLeaseOutcome["result"] }) {
  if (result.outcome === "refused") return <span>{result.message}</span>;
  const audit = (
    <Link href={auditEntryHref(result)} className="text-sky-700 hover:underline dark:text-sky-300">
      audit entry
    </Link>
  );
  if (result.outcome === "released") {
    return (
      <span>
        ended <span className="font-mono">{result.released.owner}</span>&apos;s lease (token <span className="font-mono">{result.released.fencingToken}</span>) · {audit}
      </span>
    );
  }
  return (
    <span>
      {result.current ? (
        <>
          now held by <span className="font-mono">{result.current.owner}</span> (token <span className="font-mono">{result.current.fencingToken}</span>); nothing released
        </>
      ) : (
        "nobody holds it any more; nothing released"
      )}{" "}
      · {audit}
    </span>
  );
}
