import { formatBucketTime } from "@/lib/console/shared/format";
import type { TimeScale } from "@/lib/console/shared/time-scale";

export { bucketEventsHref, bucketUnit, buildTimeScale, formatBucketLabel, type TimeScale } from "@/lib/console/shared/time-scale";

/** The x axis of every time chart: bucket starts (ms), the view's shared ticks, labelled in UTC. */
export function timeAxisProps(scale: TimeScale) {
  return {
    dataKey: "t",
    type: "number" as const,
    scale: "time" as const,
    domain: [scale.startMs, scale.endMs] as [number, number],
    ticks: scale.ticks,
    interval: 0 as const,
    tickFormatter: (t: number) => scale.labels.get(t) ?? formatBucketTime(t, scale.bucketMs),
  };
}
