"use client";
import type { UseMutationResult } from "@tanstack/react-query";
import { useId, useState } from "react";
import { MAX_REASON_CHARS, MIN_REASON_CHARS } from "@/lib/console/release/force-release-types";
import { FIELD, LABEL } from "@/components/ui/form-controls";

/** Whether a reason's length (spaces at either end not counted) is what the server accepts. */
export function isReasonLengthOk(reason: string): boolean {
  const length = reason.trim().length;
  return length >= MIN_REASON_CHARS && length <= MAX_REASON_CHARS;
}

/**
 * A release form's state: the reason, the name typed again (it must equal `name`), and a
 * refusal with field problems, which keeps the dialog open; any other answer goes to `onDone`.
 */
export function useReleaseForm<Input, Result extends { outcome: string }>(
  mutation: Pick<UseMutationResult<Result, Error, Input>, "isPending" | "mutate">,
  name: string,
  onDone: (result: Result) => void,
) {
  const [reason, setReason] = useState("");
  const [confirm, setConfirm] = useState("");
  const [problem, setProblem] = useState<Result | null>(null);
  const send = (event: React.FormEvent, input: Input) => {
    event.preventDefault();
    if (mutation.isPending) return;
    mutation.mutate(input, {
      onSuccess: (result) => {
        if (result.outcome === "refused" && "code" in result && result.code === "invalid_input") setProblem(result);
        else onDone(result);
      },
    });
  };
  return { reason, setReason, confirm, setConfirm, problem, send, canSubmit: isReasonLengthOk(reason) && confirm === name && !mutation.isPending };
}

/** The reason a force-release is kept in the audit log with, and how many characters it still needs. Focus starts here. */
export function ReasonField({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  const id = useId();
  const length = value.trim().length;
  return (
    <div>
      <label htmlFor={id} className={LABEL}>
        Reason <span className="font-normal text-zinc-600 dark:text-zinc-400">({MIN_REASON_CHARS}–{MAX_REASON_CHARS} characters, kept in the audit log)</span>
      </label>
      <textarea
        id={id}
        data-autofocus
        name="reason"
        required
        minLength={MIN_REASON_CHARS}
        maxLength={MAX_REASON_CHARS}
        rows={3}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-describedby={`${id}-count`}
        className={`${FIELD} mt-1`}
      />
      <p id={`${id}-count`} className="mt-1 text-xs text-zinc-600 dark:text-zinc-400" aria-live="polite">
        {length < MIN_REASON_CHARS ? `${MIN_REASON_CHARS - length} more characters needed` : `${length} / ${MAX_REASON_CHARS}`}
      </p>
    </div>
  );
}

/** The name of what is about to be released, typed again: `what` names it ("resource name", "prefix"). */
export function ConfirmNameField({ what, name, value, onChange }: { what: string; name: string; value: string; onChange: (value: string) => void }) {
  const id = useId();
  return (
    <div>
      <label htmlFor={id} className={LABEL}>
        Type the {what} to confirm: <span className="break-all font-mono font-normal">{name}</span>
      </label>
      <input id={id} name="confirm" autoComplete="off" spellCheck={false} value={value} onChange={(e) => onChange(e.target.value)} className={`${FIELD} mt-1 font-mono`} />
    </div>
  );
}
