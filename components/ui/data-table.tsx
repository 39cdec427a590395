import Link from "next/link";
import { cx } from "./cx";

/**
 * Dense table primitives shared by every list. Ids, tokens and resources go in
 * `mono` cells. Sorting is a link (the sort lives in the URL), announced with aria-sort.
 * Cells are padded tightly (more inside the table's outer edge) so a ten-column
 * list fits a 1280-pixel screen; long names truncate with the full text in `title`.
 */

/** Horizontal cell padding: tight between columns, roomier at the table's edges. */
const CELL_X = "px-2 first:pl-3 last:pr-3";

export const MONO = "font-mono text-[12px] tabular-nums";

/** A name in a cell that links to its filtered view: quieter than the row's main link, still underlined. */
export const CELL_LINK =
  "underline decoration-zinc-400 decoration-dotted underline-offset-4 hover:text-sky-700 hover:decoration-solid dark:decoration-zinc-500 dark:hover:text-sky-300";

/** `id`: a skip link's target (the region takes focus, and the next Tab is inside the table). */
export function DataTable({ caption, className, id, children }: { caption?: string; className?: string; id?: string; children: React.ReactNode }) {
  return (
    // Focusable region: a table wider than the screen must scroll by keyboard too.
    <div
      id={id}
      role="region"
      aria-label={caption ?? "Table"}
      tabIndex={0}
      // `relative`: the containing block of the cells' sr-only text (absolutely positioned), so the region
      // clips it too; without it that text sits where its column is and widens the page on a narrow screen.
      className={cx("relative overflow-x-auto rounded-lg border border-zinc-200 dark:border-zinc-800", className)}
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

/** A column of a header row of plain labels: right-aligned (`align: "right"`) for numbers. */
export type HeaderColumn = string | { label: string; align: "right" };

/** The header of a table whose column heads are plain labels (no sorting links). */
export function TableHeader({ columns }: { columns: readonly HeaderColumn[] }) {
  return (
    <THead>
      <tr>
        {columns.map((column) =>
          typeof column === "string" ? (
            <Th key={column}>{column}</Th>
          ) : (
            <Th key={column.label} align={column.align}>
              {column.label}
            </Th>
          ),
        )}
      </tr>
    </THead>
  );
}

export function TBody({ children }: { children: React.ReactNode }) {
  return <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800/80">{children}</tbody>;
}

/** `rowKey`: what the row shows (store and id), so a live table's rows can be told apart across updates. */
export function Tr({ className, rowKey, children }: { className?: string; rowKey?: string; children: React.ReactNode }) {
  return (
    <tr data-row-key={rowKey} className={cx("hover:bg-zinc-50 dark:hover:bg-zinc-900/60", className)}>
      {children}
    </tr>
  );
}

export function Th({
  className,
  align = "left",
  sorted,
  children,
}: {
  className?: string;
  align?: "left" | "right";
  /** A list always sorted by this column (no other order offered). */
  sorted?: "ascending" | "descending";
  children?: React.ReactNode;
}) {
  return (
    <th scope="col" aria-sort={sorted} className={cx("whitespace-nowrap py-2 font-medium", CELL_X, align === "right" && "text-right", className)}>
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
    <th scope="col" aria-sort={direction ?? "none"} className={cx("whitespace-nowrap py-2 font-medium", CELL_X, align === "right" && "text-right")}>
      {/* A link, so Tab reaches it and Enter sorts; the underline marks it as operable. */}
      <Link
        href={href}
        className="inline-flex items-center gap-1 rounded underline decoration-dotted underline-offset-4 hover:text-zinc-900 hover:decoration-solid dark:hover:text-zinc-100"
      >
        {label}
        <span aria-hidden="true" className={cx(!direction && "opacity-50")}>
          {direction === "descending" ? "▼" : direction === "ascending" ? "▲" : "↕"}
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
    <td title={title} className={cx("whitespace-nowrap py-1.5 align-middle", CELL_X, mono && MONO, align === "right" && "text-right", className)}>
      {children}
    </td>
  );
}
