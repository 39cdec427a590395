import Link from "next/link";
import { MAX_PREV_CURSORS, withParams } from "@/lib/console/shared/links";

/**
 * Keyset paging in the URL: `cursor` is where this page starts, `prev` the
 * cursors of the pages before it (so "Previous" works without counting offsets,
 * which stay fast at any depth).
 */
export function Pager({
  basePath,
  search,
  nextCursor,
  label,
}: {
  basePath: string;
  search: string;
  nextCursor: string | null;
  label: string;
}) {
  const params = new URLSearchParams(search);
  const cursor = params.get("cursor");
  const prev = (params.get("prev") ?? "").split(",").filter(Boolean);
  const isFirst = !cursor;
  const prevHref = isFirst
    ? null
    : `${basePath}${withParams(params, { cursor: prev.at(-1) ?? null, prev: prev.slice(0, -1) })}`;
  const nextHref = nextCursor
    ? `${basePath}${withParams(params, { cursor: nextCursor, prev: cursor ? [...prev, cursor].slice(-MAX_PREV_CURSORS) : [] })}`
    : null;
  const firstHref = `${basePath}${withParams(params, {})}`;
  const linkClass =
    "rounded-md border border-zinc-300 px-2.5 py-1 text-sm font-medium hover:bg-zinc-100 dark:border-zinc-700 dark:hover:bg-zinc-800";
  const disabledClass = "rounded-md border border-zinc-200 px-2.5 py-1 text-sm text-zinc-400 dark:border-zinc-800 dark:text-zinc-600";
  return (
    <nav aria-label={`${label} pages`} className="flex items-center gap-2">
      {!isFirst && prev.length > 0 ? (
        <Link href={firstHref} className={linkClass}>
          First
        </Link>
      ) : null}
      {prevHref ? (
        <Link href={prevHref} className={linkClass} rel="prev">
          ← Previous
        </Link>
      ) : (
        <span aria-disabled="true" className={disabledClass}>
          ← Previous
        </span>
      )}
      {nextHref ? (
        <Link href={nextHref} className={linkClass} rel="next">
          Next →
        </Link>
      ) : (
        <span aria-disabled="true" className={disabledClass}>
          Next →
        </span>
      )}
    </nav>
  );
}
