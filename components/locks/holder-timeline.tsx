import { ENDING_COLORS } from "@/components/charts/chart-theme";
import { formatDuration, formatUtc } from "@/components/ui/format";
import type { HoldBar, HoldEnding } from "@/lib/console/shared/views";

export const ENDING_LABELS: Record<HoldEnding, string> = {
  released: "released",
  expired: "expired",
  force_released: "force-released",
  held: "held now",
  unknown: "end not recorded yet",
};

/** Shown at most; older holds are in the event table and on /events. */
const MAX_BARS = 24;

/**
 * One row per holder, placed on a shared time axis from the first shown hold to
 * the store's "now": a bar from acquired to its end, coloured AND labelled by how
 * it ended (released, expired, force-released, still held).
 */
export function HolderTimeline({ bars, storeNow, markAt }: { bars: HoldBar[]; storeNow: string; /** The past view's instant, marked on every row. */ markAt?: string | null }) {
  const shown = bars.slice(-MAX_BARS);
  if (shown.length === 0) {
    return <p className="text-sm text-zinc-600 dark:text-zinc-400">No holder in the recorded history yet.</p>;
  }
  const nowMs = Date.parse(storeNow);
  const startMs = Date.parse(shown[0]!.start);
  const endMs = Math.max(nowMs, ...shown.map((b) => (b.end ? Date.parse(b.end) : nowMs)));
  const span = Math.max(1, endMs - startMs);
  const pct = (ms: number) => `${(((ms - startMs) / span) * 100).toFixed(3)}%`;
  return (
    <div>
      <ol className="space-y-1.5" aria-label="Holders, oldest first">
        {shown.map((bar, i) => {
          const barStart = Date.parse(bar.start);
          const barEnd = bar.end ? Date.parse(bar.end) : nowMs;
          const label = ENDING_LABELS[bar.ending];
          const held = bar.holdMs ?? barEnd - barStart;
          return (
            <li key={`${bar.leaseId}-${i}`} className="grid grid-cols-2 items-center gap-x-3 gap-y-1 text-xs sm:grid-cols-[14rem_1fr_10rem]" data-ending={bar.ending}>
              <span className="truncate font-mono" title={`${bar.owner ?? "?"} · ${bar.task ?? "?"} · lease ${bar.leaseId}`}>
                {bar.owner ?? "unknown"} <span className="text-zinc-500 dark:text-zinc-400">#{bar.fencingToken ?? "?"}</span>
              </span>
              <span className="relative order-last col-span-2 h-4 rounded bg-zinc-100 sm:order-none sm:col-span-1 dark:bg-zinc-800" aria-hidden="true">
                <span
                  className="absolute inset-y-0 rounded"
                  style={{
                    left: pct(barStart),
                    width: `max(3px, calc(${pct(barEnd)} - ${pct(barStart)}))`,
                    background: ENDING_COLORS[bar.ending],
                    opacity: bar.ending === "held" ? 0.85 : 0.7,
                  }}
                  title={`${formatUtc(bar.start)} → ${bar.end ? formatUtc(bar.end) : "now"}`}
                />
                {markAt && Date.parse(markAt) >= startMs && Date.parse(markAt) <= endMs ? (
                  <span className="absolute inset-y-[-2px] w-0.5 bg-violet-600 dark:bg-violet-400" style={{ left: pct(Date.parse(markAt)) }} data-testid="timeline-instant" />
                ) : null}
              </span>
              <span className="flex min-w-0 items-center gap-1.5">
                <span aria-hidden="true" className="size-2 shrink-0 rounded-full" style={{ background: ENDING_COLORS[bar.ending] }} />
                <span>
                  {label} <span className="text-zinc-500 dark:text-zinc-400">after {formatDuration(held)}</span>
                </span>
                <span className="sr-only">
                  {" "}
                  — {bar.owner ?? "unknown"} acquired at {formatUtc(bar.start)}
                  {bar.end ? `, ended at ${formatUtc(bar.end)}` : ", still held"}
                </span>
              </span>
            </li>
          );
        })}
      </ol>
      <p className="mt-2 flex justify-between text-[11px] text-zinc-500 dark:text-zinc-400">
        <span title={formatUtc(startMs)}>{formatUtc(startMs)}</span>
        <span title={formatUtc(nowMs)}>store now</span>
      </p>
    </div>
  );
}
