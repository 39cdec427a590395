import type * as ioredis from "ioredis";
import { loadOptionalPeer } from "../optional-peer";

let driver: typeof ioredis | undefined;

/** The `ioredis` module, required on first use (see optional-peer.ts). */
export function loadIoredis(): typeof ioredis {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use: ioredis is an optional peer
  return (driver ??= loadOptionalPeer<typeof ioredis>("ioredis", "a Redis lease store", () => require("ioredis")));
}
