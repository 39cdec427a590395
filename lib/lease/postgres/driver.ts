import type pg from "pg";
import { loadOptionalPeer } from "../optional-peer";

let driver: typeof pg | undefined;

/** The `pg` module, required on first use (see optional-peer.ts). */
export function loadPg(): typeof pg {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use: pg is an optional peer
  return (driver ??= loadOptionalPeer<typeof pg>("pg", "a Postgres lease store", () => require("pg")));
}
