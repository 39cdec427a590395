import { ReferenceLine } from "recharts";

/**
 * The past view's instant on a time chart: a labelled vertical line at the bucket that
 * holds it (the x axis is bucket starts). Called as a function so the chart gets the
 * ReferenceLine element itself.
 */
export function renderInstantLine(markAt: number | null | undefined, bucketMs: number) {
  if (markAt === null || markAt === undefined || !Number.isFinite(markAt)) return null;
  const x = Math.floor(markAt / bucketMs) * bucketMs;
  return (
    <ReferenceLine
      key="instant"
      x={x}
      stroke="#7c3aed"
      strokeWidth={2}
      strokeDasharray="4 3"
      label={{ value: "at", position: "insideTopLeft", fill: "#7c3aed", fontSize: 11 }}
    />
  );
}
