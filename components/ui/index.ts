export { cx } from "./cx";
export { formatDuration, formatRelative, formatUtc } from "./format";
export { Badge, TONE_CLASSES, type Tone } from "./badge";
export { StatusPill } from "./status-pill";
export { Skeleton, SkeletonRows } from "./skeleton";
export { EmptyState } from "./empty-state";
export { DataTable, THead, TBody, Tr, Th, Td, SortableTh, MONO } from "./data-table";
// Client components (tick every second): import from "./relative-time", "./countdown", "./use-now" directly
// or through here — they carry their own "use client".
export { RelativeTime } from "./relative-time";
export { Countdown } from "./countdown";
export { useNow, useStoreClockOffset } from "./use-now";
