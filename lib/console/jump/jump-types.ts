/** The jump box's answer (client-safe; lib/console/jump/resolve-jump.ts makes it). */
export interface JumpResult {
  /** The query as resolved (trimmed). */
  query: string;
  found: boolean;
  /** Where to go; null when nothing matched. */
  href: string | null;
  /** What the link leads to, in words ("owner worker-8@reports-cecb"). */
  what: string | null;
  /** Stores that could not be read: "nothing found" may be only because of them. */
  unreadStores: string[];
}
