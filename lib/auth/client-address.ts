/**
 * Who is on the other end of a request, for rate limits and the audit log; shared by
 * the console and the lock API so both believe the same addresses.
 *
 * The peer is the socket's remote address. X-Forwarded-For is believed only hop by
 * hop from the right while the address that added the hop is a trusted proxy
 * (TRUSTED_PROXY: addresses or CIDRs, comma-separated). With none configured the
 * header is ignored: a client can write anything into it. The same rule as Fastify's
 * `trustProxy` (both use @fastify/proxy-addr), so the API is given the same function.
 *
 * A hop count is not accepted: it cannot tell a proxy from a client that sends
 * enough hops of its own.
 */
import proxyAddr from "@fastify/proxy-addr";
import { isIP } from "node:net";

/** Whether the address at `hop` (0: the peer) is a proxy whose X-Forwarded-For entry is believed. */
export type TrustProxy = (address: string, hop: number) => boolean;

export class TrustedProxyError extends Error {
  constructor(detail: string) {
    super(`TRUSTED_PROXY must be a comma-separated list of proxy addresses or CIDRs (e.g. 10.0.0.0/8,127.0.0.1) or loopback/linklocal/uniquelocal: ${detail}`);
    this.name = "TrustedProxyError";
  }
}

const TRUST_NONE: TrustProxy = () => false;
const parsed = new Map<string, TrustProxy>();

/** The trust rule from TRUSTED_PROXY; no proxy is trusted when it is unset. Throws TrustedProxyError when it cannot be read. */
export function parseTrustedProxy(env: Readonly<Record<string, string | undefined>> = process.env): TrustProxy {
  const raw = env.TRUSTED_PROXY?.trim() ?? "";
  if (raw === "") return TRUST_NONE;
  const known = parsed.get(raw);
  if (known) return known;
  const entries = raw.split(",").map((entry) => entry.trim()).filter(Boolean);
  if (entries.some((entry) => /^\d+$/.test(entry))) throw new TrustedProxyError(`"${raw}" looks like a hop count; list the proxies' addresses instead`);
  let trust: TrustProxy;
  try {
    trust = proxyAddr.compile(entries);
  } catch (error) {
    throw new TrustedProxyError(error instanceof Error ? error.message : String(error));
  }
  if (parsed.size > 16) parsed.clear();
  parsed.set(raw, trust);
  return trust;
}

export interface ClientAddress {
  /** The socket's remote address; null when it is not known. */
  peer: string | null;
  /** The client as the trusted proxies report it; null when the request did not come through one. */
  forwardedFor: string | null;
  /** What limits and logs key on: forwardedFor when believed, else the peer, else "unknown". */
  client: string;
}

/** `::ffff:192.0.2.1` (an IPv4 client of a dual-stack socket) is written 192.0.2.1. */
function plain(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address;
}

export function resolveClientAddress(peer: string | null | undefined, xForwardedFor: string | null | undefined, trust: TrustProxy): ClientAddress {
  if (!peer || isIP(peer) === 0) return { peer: null, forwardedFor: null, client: "unknown" };
  const hops = proxyAddr.all({ socket: { remoteAddress: peer }, headers: { "x-forwarded-for": xForwardedFor ?? undefined } } as never, trust);
  const last = hops[hops.length - 1];
  // A hop that is not an address (a typo or an attack through the proxy) is not believed either.
  const forwarded = hops.length > 1 && last && isIP(last) !== 0 ? plain(last) : null;
  return { peer: plain(peer), forwardedFor: forwarded, client: forwarded ?? plain(peer) };
}

/**
 * For the audit log's one address column (at most 64 characters): the client and the
 * proxy it came through; when both do not fit, the client (the proxy is one of TRUSTED_PROXY's).
 */
export function describeClientAddress(address: ClientAddress): string | null {
  if (!address.peer) return null;
  if (!address.forwardedFor) return address.peer;
  const both = `${address.forwardedFor} via ${address.peer}`;
  return both.length <= 64 ? both : address.forwardedFor;
}
