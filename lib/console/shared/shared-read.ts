/**
 * Server-only: one read shared by identical requests that arrive close together.
 *
 * Every open console tab polls its page every few seconds, and a page's server
 * render and its `/api` twin ask the same question. Within `ttlMs` of a read
 * finishing (or while it is still running) an identical key gets the same
 * promise instead of a new round of store reads. The answer carries its own
 * `readAt`, so a shared answer is never passed off as newer than it is.
 */

export interface SharedReads {
  /** The running or recent read for `key`, or a new one from `read()`. */
  share<T>(key: string, read: () => Promise<T>): Promise<T>;
  /** How many keys are held (running or fresh); for tests. */
  size(): number;
}

interface Entry {
  promise: Promise<unknown>;
  /** performance.now() when the read settled; undefined while running. */
  settledAt?: number;
}

/**
 * `ttlMs` bounds how stale a shared answer can be; `maxKeys` bounds memory (the
 * oldest entry goes first). A read that rejects is dropped at once, so an error
 * is never served to the next caller.
 */
export function createSharedReads({ ttlMs, maxKeys = 64 }: { ttlMs: number; maxKeys?: number }): SharedReads {
  const entries = new Map<string, Entry>();

  const isFresh = (entry: Entry, now: number) => entry.settledAt === undefined || now - entry.settledAt <= ttlMs;

  return {
    share<T>(key: string, read: () => Promise<T>): Promise<T> {
      const now = performance.now();
      const existing = entries.get(key);
      if (existing && isFresh(existing, now)) return existing.promise as Promise<T>;
      for (const [k, e] of entries) if (!isFresh(e, now)) entries.delete(k);
      while (entries.size >= maxKeys) entries.delete(entries.keys().next().value!);

      const entry: Entry = { promise: Promise.resolve() };
      const promise = read().then(
        (value) => {
          entry.settledAt = performance.now();
          return value;
        },
        (error: unknown) => {
          if (entries.get(key) === entry) entries.delete(key);
          throw error;
        },
      );
      entry.promise = promise;
      entries.set(key, entry);
      return promise;
    },
    size: () => entries.size,
  };
}
