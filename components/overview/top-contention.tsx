import Link from "next/link";
import { DataTable, TBody, THead, Td, Th, Tr } from "@/components/ui/data-table";
import { buildQuery, leaseHref } from "@/lib/console/links";
import { formatNumber, formatPercent } from "@/lib/console/format";
import type { PrefixCount, ResourceCount } from "@/lib/console/views";

const LINK = "text-sky-700 underline-offset-2 hover:underline dark:text-sky-300";

/** Most contended prefixes (from rollups) and resources (from recent contention events). */
export function TopContention({
  prefixes,
  resources,
  sample,
  depth,
  windowQuery,
}: {
  prefixes: PrefixCount[];
  resources: ResourceCount[];
  sample: number;
  depth: number;
  windowQuery: string;
}) {
  return (
    <div className="grid gap-4 lg:grid-cols-2">
      <section aria-labelledby="top-prefixes">
        <h2 id="top-prefixes" className="mb-2 text-sm font-semibold">
          Most contended prefixes <span className="font-normal text-zinc-500 dark:text-zinc-400">(depth {depth})</span>
        </h2>
        {prefixes.length === 0 ? (
          <p className="rounded-lg border border-dashed border-zinc-300 px-3 py-4 text-sm text-zinc-600 dark:border-zinc-700 dark:text-zinc-400">
            No failed acquires in this window.
          </p>
        ) : (
          <DataTable caption="Most contended prefixes">
            <THead>
              <tr>
                <Th>Prefix</Th>
                <Th align="right">Failed acquires</Th>
                <Th align="right">Share</Th>
                <Th>Drill down</Th>
              </tr>
            </THead>
            <TBody>
              {prefixes.map((p) => (
                <Tr key={p.prefix}>
                  <Td mono className="max-w-72 truncate" title={p.prefix}>{p.prefix}</Td>
                  <Td align="right" className="tabular-nums">{formatNumber(p.contended)}</Td>
                  <Td align="right" className="tabular-nums">{formatPercent(p.share)}</Td>
                  <Td>
                    <Link className={LINK} href={`/locks${buildQuery({ prefix: p.prefix })}`}>
                      leases
                    </Link>
                    {" · "}
                    <Link className={LINK} href={`/events${buildQuery({ kind: "contended", prefix: p.prefix })}&${windowQuery}`}>
                      failed acquires
                    </Link>
                  </Td>
                </Tr>
              ))}
            </TBody>
          </DataTable>
        )}
      </section>
      <section aria-labelledby="top-resources">
        <h2 id="top-resources" className="mb-2 text-sm font-semibold">
          Most contended resources{" "}
          <span className="font-normal text-zinc-500 dark:text-zinc-400">(latest {formatNumber(sample)} failed acquires)</span>
        </h2>
        {resources.length === 0 ? (
          <p className="rounded-lg border border-dashed border-zinc-300 px-3 py-4 text-sm text-zinc-600 dark:border-zinc-700 dark:text-zinc-400">
            No failed acquires in this window.
          </p>
        ) : (
          <DataTable caption="Most contended resources">
            <THead>
              <tr>
                <Th>Resource</Th>
                <Th>Store</Th>
                <Th align="right">Failed acquires</Th>
              </tr>
            </THead>
            <TBody>
              {resources.map((r) => (
                <Tr key={`${r.store}\u0000${r.resource}`}>
                  <Td mono className="max-w-80 truncate" title={r.resource}>
                    <Link className={LINK} href={leaseHref(r.store, r.resource)}>
                      {r.resource}
                    </Link>
                  </Td>
                  <Td mono>{r.store}</Td>
                  <Td align="right" className="tabular-nums">{formatNumber(r.contended)}</Td>
                </Tr>
              ))}
            </TBody>
          </DataTable>
        )}
      </section>
    </div>
  );
}
