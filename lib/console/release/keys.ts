export const releaseKeys = {
  all: ["release"] as const,
  /** Leases a bulk release under `prefix` would end (read when the dialog opens). */
  candidates: (prefix: string, store: string | null) => ["release", "candidates", prefix, store ?? ""] as const,
};
