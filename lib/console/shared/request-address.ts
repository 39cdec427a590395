/**
 * The console's client address (lib/auth/client-address.ts) for a route handler or
 * server action. Next.js gives handlers a Request without its socket, and fills
 * X-Forwarded-For with the socket address only when the client sent none, so the
 * header alone cannot say who connected. installPeerStamp() (from instrumentation.ts)
 * writes the socket address into a request header of its own as each request
 * reaches the Node.js HTTP server, before Next.js reads it; the value carries a
 * secret made at start-up, so a client cannot send one of its own.
 */
import { randomBytes } from "node:crypto";
import diagnosticsChannel from "node:diagnostics_channel";
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { parseTrustedProxy, resolveClientAddress, type ClientAddress, type TrustProxy } from "@/lib/auth/client-address";

export const PEER_HEADER = "x-leasewatch-peer";

const STAMP_KEY = Symbol.for("leasewatch.peer-stamp");
type GlobalWithStamp = typeof globalThis & { [STAMP_KEY]?: string };

/** The process's stamp secret; the same object for every bundle Next.js loads this module into. */
function stampSecret(): string | undefined {
  return (globalThis as GlobalWithStamp)[STAMP_KEY];
}

/** Stamps every request this process serves with its socket's address. Idempotent. */
export function installPeerStamp(): void {
  const g = globalThis as GlobalWithStamp;
  if (g[STAMP_KEY]) return;
  const secret = randomBytes(16).toString("hex");
  g[STAMP_KEY] = secret;
  diagnosticsChannel.subscribe("http.server.request.start", (message) => {
    const { request, socket } = message as { request: IncomingMessage; socket: Socket };
    // Overwrites whatever the client sent under this name.
    request.headers[PEER_HEADER] = `${secret} ${socket.remoteAddress ?? ""}`;
  });
}

/** The peer address from the stamp; null when the stamp is missing or not this process's. */
export function peerOf(headers: Headers): string | null {
  const secret = stampSecret();
  const stamp = headers.get(PEER_HEADER);
  if (!secret || !stamp) return null;
  const space = stamp.indexOf(" ");
  if (space < 0 || stamp.slice(0, space) !== secret) return null;
  return stamp.slice(space + 1) || null;
}

/**
 * Who sent this request: its peer, and the client behind a TRUSTED_PROXY. A TRUSTED_PROXY
 * that cannot be read trusts no proxy (the start-up checks report it).
 */
export function clientAddressOf(request: Request, env: Readonly<Record<string, string | undefined>> = process.env): ClientAddress {
  let trust: TrustProxy;
  try {
    trust = parseTrustedProxy(env);
  } catch {
    trust = () => false;
  }
  return resolveClientAddress(peerOf(request.headers), request.headers.get("x-forwarded-for"), trust);
}
