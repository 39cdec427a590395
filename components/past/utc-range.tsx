import { formatUtc } from "@/components/ui/format";

/** The exact UTC range a window covers, so "last hour" can be read back later. */
export function UtcRange({ from, to }: { from: string; to: string }) {
  return (
    <p className="text-xs text-zinc-600 dark:text-zinc-400" data-testid="utc-range">
      Window (UTC):{" "}
      <time dateTime={from} className="font-mono">
        {formatUtc(from)}
      </time>{" "}
      →{" "}
      <time dateTime={to} className="font-mono">
        {formatUtc(to)}
      </time>
    </p>
  );
}
