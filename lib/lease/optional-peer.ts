import { LeaseError } from "./errors";

/**
 * `pg` and `ioredis` are optional peer dependencies: a Redis-only service installs no
 * `pg` and a Postgres-only one no `ioredis`. So neither is imported when the library
 * loads; a store requires its driver the first time it needs one (synchronously, so
 * constructors stay synchronous, and from the same module cache the application's own
 * `import pg from "pg"` uses).
 *
 * Each driver module calls `require` with the package name written out: bundlers (Next's
 * among them) resolve a literal name and replace a computed one with a throw. The sources
 * use plain `require`, which every runner here provides (the ESM build defines it in a
 * banner, see packages/lease/tsup.config.ts); `import.meta` would make Playwright's
 * CommonJS loader take the file for an ES module.
 */
export function loadOptionalPeer<T>(name: "pg" | "ioredis", usedFor: string, load: () => unknown): T {
  try {
    return load() as T;
  } catch (error) {
    if ((error as { code?: string }).code === "MODULE_NOT_FOUND" && String((error as Error).message).includes(`'${name}'`)) {
      throw new LeaseError(`${usedFor} needs the "${name}" package: npm install ${name}`, "missing_peer_dependency");
    }
    throw error;
  }
}
