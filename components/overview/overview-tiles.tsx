import Link from "next/link";
import { buildQuery } from "@/lib/console/shared/links";
import { formatNumber, formatPercent, formatRate, formatRatio } from "@/lib/console/shared/format";
import type { OverviewTiles as Tiles } from "@/lib/console/shared/views";
import { cx } from "@/components/ui/cx";

type Tone = "plain" | "warn" | "bad";

const TONE_TEXT: Record<Tone, string> = { plain: "", warn: ", elevated", bad: ", needs attention" };

function Tile({ label, value, detail, tone = "plain", href }: { label: string; value: string; detail: string; tone?: Tone; href?: string }) {
  // Status in words as well as colour; a link is named by what the tile shows ("Fencing rejections: 47, needs attention").
  const name = `${label}: ${value}${TONE_TEXT[tone]}`;
  const valueText = (
    <>
      {value}
      {tone !== "plain" ? <span className="sr-only">{TONE_TEXT[tone]}</span> : null}
    </>
  );
  // The value is the link; a stretched ::after makes the whole tile clickable without breaking the <dl> structure.
  return (
    <div className={cx("relative rounded-lg border border-zinc-200 bg-white px-3 py-2.5 dark:border-zinc-800 dark:bg-zinc-900/40", href && "hover:border-zinc-400 dark:hover:border-zinc-600")}>
      <dt className="text-xs font-medium text-zinc-600 dark:text-zinc-400">{label}</dt>
      <dd
        className={cx(
          "mt-1 text-2xl font-semibold tabular-nums tracking-tight",
          tone === "warn" && "text-amber-700 dark:text-amber-300",
          tone === "bad" && "text-red-700 dark:text-red-300",
        )}
      >
        {href ? (
          <Link href={href} aria-label={name} className="rounded after:absolute after:inset-0 after:content-['']">
            {valueText}
          </Link>
        ) : (
          valueText
        )}
      </dd>
      <dd className="mt-0.5 text-xs text-zinc-600 dark:text-zinc-400">{detail}</dd>
    </div>
  );
}

/** The headline numbers over the window; each links to the list that explains it. */
export function OverviewTiles({
  tiles,
  windowQuery: windowOnly,
  store,
  prefix = null,
  scope = null,
  endsAt = null,
  lead = null,
}: {
  /** A tile of its own making shown first (the "overdue / lapsed now" tile: a read of now, not of the window). */
  lead?: React.ReactNode;
  tiles: Tiles;
  windowQuery: string;
  store: string | null;
  prefix?: string | null;
  /** The viewer's prefixes when their access is limited ("tenant_1:*"): counted from events, like a prefix view. */
  scope?: string | null;
  /** The window ends at this `at=` instead of now: "active" is then who held at that moment. */
  endsAt?: string | null;
}) {
  // The lists keep the store and prefix the overview is narrowed to, and its window (which carries the prefix too).
  const storeQuery = buildQuery({ store }).slice(1);
  const activeQuery = buildQuery({ store, prefix, at: endsAt }).slice(1);
  const windowQuery = [storeQuery, windowOnly].filter(Boolean).join("&");
  const attempts = tiles.acquired + tiles.contended;
  const rate = tiles.contentionRate;
  const ratio = tiles.expiredToReleased;
  return (
    <dl className="grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-5 2xl:grid-cols-9">
      {lead}
      <Tile label="Active leases" value={formatNumber(tiles.activeLeases)} detail={endsAt ? "held at the window's end (incl. lapsed, unswept)" : "held now (incl. lapsed, unswept)"} href={`/locks${activeQuery ? `?${activeQuery}` : ""}`} />
      <Tile label="Acquisitions / min" value={formatRate(tiles.acquisitionsPerMinute)} detail={`${formatNumber(tiles.acquired)} in the window`} />
      <Tile
        label="Contention rate"
        value={formatPercent(rate)}
        detail={`${formatNumber(tiles.contended)} failed of ${formatNumber(attempts)} attempts`}
        tone={rate !== null && rate > 0.5 ? "bad" : rate !== null && rate > 0.2 ? "warn" : "plain"}
        href={`/events?kind=contended&${windowQuery}`}
      />
      <Tile
        label="Expired : released"
        value={ratio === null ? (tiles.expired > 0 ? "all expired" : "—") : formatRatio(ratio)}
        detail={`${formatNumber(tiles.expired)} expired · ${formatNumber(tiles.released)} released`}
        tone={(ratio === null && tiles.expired > 0) || (ratio !== null && ratio > 0.1) ? "bad" : ratio !== null && ratio > 0.01 ? "warn" : "plain"}
        href={`/locks?state=expired&${windowQuery}`}
      />
      <Tile
        label="Force-releases"
        value={formatNumber(tiles.forceReleased)}
        detail="ended by an operator"
        href={`/events?kind=force_released&${windowQuery}`}
      />
      <Tile
        label="Renewal failures"
        value={formatNumber(tiles.renewFailed)}
        detail={`${formatNumber(tiles.lost)} leases lost by their holder`}
        tone={tiles.renewFailed > 0 ? "warn" : "plain"}
        href={`/events?kind=renew_failed,lost&${windowQuery}`}
      />
      <Tile
        label="Fencing rejections"
        value={formatNumber(tiles.fencingRejected)}
        detail="stale tokens refused downstream"
        tone={tiles.fencingRejected > 0 ? "bad" : "plain"}
        href={`/events?kind=fencing_rejected&${windowQuery}`}
      />
      {/* Renewals are counted per store, not recorded as events, so a prefix view cannot count them. */}
      {prefix === null && scope === null ? (
        <Tile label="Renewals" value={formatNumber(tiles.renewed)} detail="successful renewals in the window" />
      ) : (
        <Tile label="Renewals" value="—" detail="counted per store only, not per prefix" />
      )}
    </dl>
  );
}
