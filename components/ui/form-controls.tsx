import { cx } from "@/components/ui/cx";

export const FIELD = "block w-full rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-600 dark:bg-zinc-950";
export const LABEL = "block text-sm font-medium";
export const DANGER_BUTTON =
  "rounded-md bg-red-700 px-3 py-1.5 text-sm font-semibold text-white hover:bg-red-800 disabled:cursor-not-allowed disabled:opacity-50 dark:bg-red-600 dark:hover:bg-red-500";
export const PLAIN_BUTTON = "rounded-md px-3 py-1.5 text-sm font-medium text-zinc-700 hover:bg-zinc-100 dark:text-zinc-200 dark:hover:bg-zinc-800";

/** A dialog's buttons, right-aligned: Cancel, then the dialog's own action (`children`). */
export function DialogActions({ onCancel, className, children }: { onCancel: () => void; className?: string; children: React.ReactNode }) {
  return (
    <div className={cx("flex justify-end gap-2", className)}>
      <button type="button" onClick={onCancel} className={PLAIN_BUTTON}>
        Cancel
      </button>
      {children}
    </div>
  );
}
