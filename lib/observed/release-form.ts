import { z } from "zod";

/**
 * The force-release form for an observed lock (browser-safe: zod only). `shown` is
 * what the dialog showed of the holder; the server releases only while the lock
 * still shows exactly that.
 */
export const ZObservedShown = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("shedlock"),
    lockedBy: z.string().min(1, { error: "lockedBy is the holder shown (locked_by)" }).max(255),
    lockedAt: z.iso.datetime({ error: "lockedAt must be the ISO time shown (locked_at)" }),
  }),
  z.strictObject({
    kind: z.literal("redis-keys"),
    type: z.enum(["string", "zset"], { error: "type must be string or zset" }),
    value: z.string().min(1, { error: "value is the holder value shown" }).max(1024),
  }),
  z.strictObject({
    kind: z.literal("pg-advisory"),
    pid: z.int({ error: "pid must be the holder's process id" }).min(1).max(2 ** 31 - 1),
    backendStart: z.iso.datetime({ error: "backendStart must be the ISO time shown" }),
  }),
]);
export type TObservedShown = z.infer<typeof ZObservedShown>;

export const ZObservedReleaseForm = z.strictObject({
  store: z.string().trim().min(1, { error: "store is required" }).max(64),
  resource: z.string().min(1, { error: "resource is required" }).max(512),
  shown: ZObservedShown,
  reason: z
    .string()
    .trim()
    .min(10, { error: "reason must be at least 10 characters" })
    .max(500, { error: "reason must be at most 500 characters" }),
});
export type TObservedReleaseForm = z.infer<typeof ZObservedReleaseForm>;

/** The permission a release of this kind needs: ending an advisory lock ends its holder's whole session. */
export function observedReleasePermission(kind: TObservedShown["kind"]): "observed:release" | "observed:terminate" {
  return kind === "pg-advisory" ? "observed:terminate" : "observed:release";
}

/** What the audit entry names as the holder shown. */
export function describeShown(shown: TObservedShown): string {
  switch (shown.kind) {
    case "shedlock":
      return `${shown.lockedBy} · locked at ${shown.lockedAt}`;
    case "redis-keys":
      return shown.value;
    case "pg-advisory":
      return `pid ${shown.pid} · backend started ${shown.backendStart}`;
  }
}

/**
 * What the force-release form sends for a lock as the observer recorded it, or null
 * when that lock cannot be released as one holder: a Redis sorted set with several
 * members, or an advisory lock held shared by several sessions.
 */
export function shownOf(kind: TObservedShown["kind"], lock: { holder: string; detail?: Record<string, unknown> }): TObservedShown | null {
  const d = lock.detail ?? {};
  const parsed = ZObservedShown.safeParse(
    kind === "shedlock"
      ? { kind, lockedBy: d.lockedBy, lockedAt: d.lockedAt }
      : kind === "redis-keys"
        ? d.holders === 1 ? { kind, type: d.type, value: lock.holder } : null
        : Array.isArray(d.pids) && d.pids.length === 1 ? { kind, pid: d.pids[0], backendStart: d.backendStart } : null,
  );
  return parsed.success ? parsed.data : null;
}
