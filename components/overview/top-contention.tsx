import Link from "next/link";
import { DataTable, TBody, Td, Tr, TableHeader } from "@/components/ui/data-table";
import { buildQuery, leaseHref } from "@/lib/console/shared/links";
import { formatNumber, formatPercent } from "@/lib/console/shared/format";
import { describeChange } from "@/lib/console/overview/trend";
import type { ContentionTrend, PrefixCount, ResourceCount } from "@/lib/console/shared/views";
import { Sparkline } from "@/components/charts/sparkline";
import { cx } from "@/components/ui/cx";

const LINK = "text-sky-700 underline-offset-4 hover:underline dark:text-sky-300";

function NoFailedAcquires() {
  return (
    <p className="rounded-lg border border-dashed border-zinc-300 px-3 py-4 text-sm text-zinc-600 dark:border-zinc-700 dark:text-zinc-400">
      No failed acquires in this window.
    </p>
  );
}

const ARROWS = { up: "▲", down: "▼", same: "", new: "▲" } as const;

/** "+140 %" with an arrow, and the whole sentence for screen readers; then the window's shape. */
function TrendCell({ contended, trend }: { contended: number; trend: ContentionTrend }) {
  const change = describeChange(contended, trend.previous);
  return (
    <Td className="whitespace-nowrap">
      <span className="inline-flex items-center gap-2">
        <span
          title={change.label}
          className={cx(
            "w-16 text-right text-xs tabular-nums",
            change.direction === "up" || change.direction === "new" ? "text-red-700 dark:text-red-300" : "text-zinc-700 dark:text-zinc-300",
          )}
        >
          <span aria-hidden="true">
            {ARROWS[change.direction]} {change.text}
          </span>
          <span className="sr-only">{change.label}</span>
        </span>
        <Sparkline values={trend.spark} className="text-zinc-500 dark:text-zinc-400" />
      </span>
    </Td>
  );
}

/** One of the two tables under its heading (`title` and a `note` on how names are grouped), or a line saying nothing failed. */
function ContentionSection({
  title,
  note,
  caption,
  columns,
  isEmpty,
  children,
}: {
  title: string;
  note: string;
  caption: string;
  columns: React.ComponentProps<typeof TableHeader>["columns"];
  isEmpty: boolean;
  children: React.ReactNode;
}) {
  return (
    <section className="min-w-0">
      <h2 className="mb-2 text-sm font-semibold">
        {title} <span className="font-normal text-zinc-500 dark:text-zinc-400">({note})</span>
      </h2>
      {isEmpty ? (
        <NoFailedAcquires />
      ) : (
        <DataTable caption={caption}>
          <TableHeader columns={columns} />
          <TBody>{children}</TBody>
        </DataTable>
      )}
    </section>
  );
}

/** The failed acquires matching `filters` in the overview's window. */
function FailedAcquiresLink({ filters, windowQuery }: { filters: Record<string, string | null>; windowQuery: string }) {
  return (
    <Link className={LINK} href={`/events${buildQuery({ kind: "contended", ...filters })}&${windowQuery}`}>
      failed acquires
    </Link>
  );
}

/** Most contended prefixes (depth chosen in the UI) and resources (first `resourceDepth` segments), both from rollups. */
export function TopContention({
  prefixes,
  resources,
  resourceDepth,
  depth,
  selectedStore,
  windowQuery,
}: {
  prefixes: PrefixCount[];
  resources: ResourceCount[];
  resourceDepth: number;
  depth: number;
  selectedStore: string | null;
  windowQuery: string;
}) {
  return (
    // One table per row up to 1536 px: with the change column, two side by side would clip their links at 1280.
    <div className="grid grid-cols-1 gap-4 2xl:grid-cols-2">
      {/* Plain sections: each table is already a region named by its caption, and two landmarks may not share a name. */}
      <ContentionSection
        title="Most contended prefixes"
        note={`depth ${depth}`}
        caption="Most contended prefixes"
        columns={["Prefix", { label: "Failed acquires", align: "right" }, { label: "Share", align: "right" }, "vs previous window", "Drill down"]}
        isEmpty={prefixes.length === 0}
      >
        {prefixes.map((p) => (
          <Tr key={p.prefix}>
            <Td mono className="max-w-72 truncate" title={p.prefix}>{p.prefix}</Td>
            <Td align="right" className="tabular-nums">{formatNumber(p.contended)}</Td>
            <Td align="right" className="tabular-nums">{formatPercent(p.share)}</Td>
            <TrendCell contended={p.contended} trend={p.trend} />
            <Td>
              <Link className={LINK} href={`/locks${buildQuery({ store: selectedStore, prefix: p.prefix })}`}>
                leases
              </Link>
              {" · "}
              <FailedAcquiresLink filters={{ store: selectedStore, prefix: p.prefix }} windowQuery={windowQuery} />
            </Td>
          </Tr>
        ))}
      </ContentionSection>
      <ContentionSection
        title="Most contended resources"
        note={`first ${resourceDepth} segments`}
        caption={`Most contended resources (first ${resourceDepth} segments)`}
        columns={["Resource", "Store", { label: "Failed acquires", align: "right" }, "vs previous window", "Drill down"]}
        isEmpty={resources.length === 0}
      >
        {resources.map((r) => (
          <Tr key={`${r.store}\u0000${r.resource}`}>
            <Td mono>
              {r.isResource ? (
                <Link className={`${LINK} block max-w-72 truncate`} href={leaseHref(r.store, r.resource)} title={r.resource}>
                  {r.resource}
                </Link>
              ) : (
                // Only the start of longer names: list the leases under it.
                <Link
                  className={`${LINK} block max-w-72 truncate`}
                  href={`/locks${buildQuery({ store: r.store, prefix: `${r.resource}:` })}`}
                  title={`${r.resource}:… (longer names grouped under their first ${resourceDepth} segments)`}
                >
                  {r.resource}:…
                </Link>
              )}
            </Td>
            <Td mono>{r.store}</Td>
            <Td align="right" className="tabular-nums">{formatNumber(r.contended)}</Td>
            <TrendCell contended={r.contended} trend={r.trend} />
            <Td>
              <FailedAcquiresLink filters={r.isResource ? { store: r.store, resource: r.resource } : { store: r.store, prefix: `${r.resource}:` }} windowQuery={windowQuery} />
            </Td>
          </Tr>
        ))}
      </ContentionSection>
    </div>
  );
}
