import { cx } from "./cx";

/** Says what is (not) here and what to do about it; `action` is usually a link or button. */
export function EmptyState({
  title,
  children,
  action,
  className,
}: {
  title: string;
  children?: React.ReactNode;
  action?: React.ReactNode;
  className?: string;
}) {
  return (
    <div
      className={cx(
        "flex flex-col items-center justify-center gap-2 rounded-lg border border-dashed border-zinc-300 px-6 py-10 text-center dark:border-zinc-700",
        className,
      )}
    >
      <p className="text-sm font-semibold text-zinc-800 dark:text-zinc-100">{title}</p>
      {children ? <div className="max-w-prose text-sm text-zinc-600 dark:text-zinc-400">{children}</div> : null}
      {action ? <div className="mt-2">{action}</div> : null}
    </div>
  );
}
