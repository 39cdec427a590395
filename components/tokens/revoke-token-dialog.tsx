"use client";
import { DANGER_BUTTON, DialogActions } from "@/components/ui/form-controls";
import { ModalDialog } from "@/components/ui/modal-dialog";
import type { ApiTokenView, RevokeTokenResult } from "@/lib/console/tokens/token-types";
import { useRevokeTokenMutation } from "@/lib/console/tokens/token-mutations";
import { RefusalNotice } from "./refusal-notice";

/** The confirm step of a revoke: which token, what it will stop, then the server's answer. */
export function RevokeTokenDialog({
  token,
  onClose,
  onRevoked,
}: {
  token: ApiTokenView;
  onClose: () => void;
  onRevoked: (result: Extract<RevokeTokenResult, { ok: true }>) => void;
}) {
  const mutation = useRevokeTokenMutation();
  const refusal = mutation.data && !mutation.data.ok ? mutation.data : null;
  return (
    <ModalDialog open onClose={onClose} title="Revoke this API token" description="Workers using it are refused (401) within a second. This cannot be undone.">
      <dl className="mb-4 grid grid-cols-[8rem_1fr] gap-x-3 gap-y-1 text-sm">
        <dt className="text-zinc-600 dark:text-zinc-400">Name</dt>
        <dd className="font-mono">{token.name}</dd>
        <dt className="text-zinc-600 dark:text-zinc-400">Prefixes</dt>
        <dd className="font-mono">{token.prefixes.join(" ")}</dd>
        <dt className="text-zinc-600 dark:text-zinc-400">Stores</dt>
        <dd className="font-mono">{token.stores.join(", ")}</dd>
        <dt className="text-zinc-600 dark:text-zinc-400">Created by</dt>
        <dd className="font-mono">{token.createdBy}</dd>
      </dl>
      {refusal ? <RefusalNotice refusal={refusal} /> : null}
      <DialogActions onCancel={onClose} className="mt-4">
        <button
          type="button"
          disabled={mutation.isPending}
          className={DANGER_BUTTON}
          onClick={() => mutation.mutate({ id: token.id }, { onSuccess: (result) => (result.ok ? onRevoked(result) : undefined) })}
        >
          {mutation.isPending ? "Revoking…" : `Revoke ${token.name}`}
        </button>
      </DialogActions>
    </ModalDialog>
  );
}
