import Link from "next/link";
import { cx } from "./cx";

/**
 * Dense table primitives shared by every list. Ids, tokens and resources go in
 * `mono` cells. Sorting is a link (the sort lives in the URL), announced with aria-sort.
 */

export const MONO = "font-mono text-[12px] tabular-nums";

export function DataTable({ caption, className, children }: { caption?: string; className?: string; children: React.ReactNode }) {
  return (
    // Focusable region: a table wider than the screen must scroll by keyboard too.
    <div
      role="region"
      aria-label={caption ?? "Table"}
      tabIndex={0}
      className={cx("overflow-x-auto rounded-lg border border-zinc-200 dark:border-zinc-800", className)}
    >
      <table className="w-full border-collapse text-left text-[13px]">
        {caption ? <caption className="sr-only">{caption}</caption> : null}
        {children}
      </table>
    </div>
  );
}

export function THead({ children }: { children: React.ReactNode }) {
  return (
    <thead className="sticky top-0 z-10 bg-zinc-50 text-xs uppercase tracking-wide text-zinc-600 dark:bg-zinc-900 dark:text-zinc-400">
      {children}
    </thead>
  );
}

export function TBody({ children }: { children: React.ReactNode }) {
  return <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800/80">{children}</tbody>;
}

export function Tr({ className, children }: { className?: string; children: React.ReactNode }) {
  return <tr className={cx("hover:bg-zinc-50 dark:hover:bg-zinc-900/60", className)}>{children}</tr>;
}

export function Th({ className, align = "left", children }: { className?: string; align?: "left" | "right"; children?: React.ReactNode }) {
  return (
    <th scope="col" className={cx("whitespace-nowrap px-3 py-2 font-medium", align === "right" && "text-right", className)}>
      {children}
    </th>
  );
}

/** A header cell whose label links to the same list sorted by this column. */
export function SortableTh({
  label,
  href,
  direction,
  align = "left",
}: {
  label: string;
  href: string;
  /** Set on the column the list is currently sorted by. */
  direction?: "ascending" | "descending";
  align?: "left" | "right";
}) {
  return (
    <th scope="col" aria-sort={direction ?? "none"} className={cx("whitespace-nowrap px-3 py-2 font-medium", align === "right" && "text-right")}>
      <Link href={href} className="inline-flex items-center gap-1 rounded hover:text-zinc-900 dark:hover:text-zinc-100">
        {label}
        <span aria-hidden="true" className={cx(!direction && "opacity-0")}>
          {direction === "descending" ? "▼" : "▲"}
        </span>
      </Link>
    </th>
  );
}

export function Td({
  className,
  mono,
  align = "left",
  title,
  children,
}: {
  className?: string;
  mono?: boolean;
  align?: "left" | "right";
  title?: string;
  children?: React.ReactNode;
}) {
  return (
    <td title={title} className={cx("whitespace-nowrap px-3 py-1.5 align-middle", mono && MONO, align === "right" && "text-right", className)}>
      {children}
    </td>
  );
}
