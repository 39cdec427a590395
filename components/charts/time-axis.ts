import { formatBucketTime } from "@/lib/console/format";

/** The x axis of every time chart: bucket starts (ms), labelled in UTC. */
export function timeAxisProps(bucketMs: number) {
  return {
    dataKey: "t",
    type: "number" as const,
    scale: "time" as const,
    domain: ["dataMin", "dataMax"] as [string, string],
    tickFormatter: (t: number) => formatBucketTime(t, bucketMs),
    minTickGap: 40,
  };
}

/** Tooltip heading: the bucket as an exact UTC interval start. */
export function formatBucketLabel(label: unknown, bucketMs: number): string {
  const t = typeof label === "number" ? label : Number(label);
  if (!Number.isFinite(t)) return "";
  const start = new Date(t).toISOString().slice(0, 16).replace("T", " ");
  return `${start} UTC (${bucketMs >= 3_600_000 ? "hour" : "minute"})`;
}
