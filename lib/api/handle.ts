/**
 * Lease handles: the `{leaseId}` in `/v1/locks/{leaseId}`. A handle carries the
 * store, resource, library lease id, ttl and the id of the token that acquired it, and
 * an HMAC-SHA256 over them with the server's key, so a client can neither forge one nor
 * edit one to reach another resource or to pass it to another token. It is opaque to
 * clients but not secret: it names the resource, which its holder already knows.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";

export interface HandlePayload {
  store: string;
  resource: string;
  leaseId: string;
  ttlMs: number;
  /** The API token that acquired the lease: only it may renew or release it. */
  tokenId: string;
}

const ZPayload = z.tuple([z.string(), z.string(), z.string(), z.number().int(), z.string()]);
const MAC_BYTES = 32;
export const MIN_HANDLE_KEY_BYTES = 32;

function mac(key: Buffer, body: string): Buffer {
  return createHmac("sha256", key).update(`leasewatch.handle.v2\n${body}`).digest();
}

export function encodeHandle(key: Buffer, payload: HandlePayload): string {
  const body = Buffer.from(JSON.stringify([payload.store, payload.resource, payload.leaseId, payload.ttlMs, payload.tokenId]), "utf8").toString("base64url");
  return `${body}.${mac(key, body).toString("base64url")}`;
}

/** The payload of an authentic handle, or null for anything else (forged, edited, truncated, garbage). */
export function decodeHandle(key: Buffer, handle: string): HandlePayload | null {
  if (handle.length > 4096) return null;
  const dot = handle.indexOf(".");
  if (dot <= 0) return null;
  const body = handle.slice(0, dot);
  const given = Buffer.from(handle.slice(dot + 1), "base64url");
  if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(key, body))) return null;
  try {
    const parsed = ZPayload.safeParse(JSON.parse(Buffer.from(body, "base64url").toString("utf8")));
    if (!parsed.success) return null;
    const [store, resource, leaseId, ttlMs, tokenId] = parsed.data;
    return { store, resource, leaseId, ttlMs, tokenId };
  } catch {
    return null;
  }
}

/**
 * encodeHandle and decodeHandle with one key, remembering up to `capacity` authentic handles (the
 * oldest are forgotten first): decoding a remembered one — on this replica, a lease's renews and
 * release — is a map lookup instead of an HMAC, a base64 and a JSON parse. The answers are the same
 * (decodeHandle is a function of the key and the handle), so forgetting only costs time.
 */
export class HandleCodec {
  private readonly known = new Map<string, Readonly<HandlePayload>>();

  constructor(
    private readonly key: Buffer,
    private readonly capacity = 4096,
  ) {}

  encode(payload: HandlePayload): string {
    const handle = encodeHandle(this.key, payload);
    this.remember(handle, { store: payload.store, resource: payload.resource, leaseId: payload.leaseId, ttlMs: payload.ttlMs, tokenId: payload.tokenId });
    return handle;
  }

  decode(handle: string): Readonly<HandlePayload> | null {
    const known = this.known.get(handle);
    if (known) return known;
    const payload = decodeHandle(this.key, handle);
    if (payload) this.remember(handle, payload);
    return payload;
  }

  /** The handle's lease ended (released, or found not held): its next use is rare and may pay the HMAC. */
  forget(handle: string): void {
    this.known.delete(handle);
  }

  private remember(handle: string, payload: Readonly<HandlePayload>): void {
    if (this.known.size >= this.capacity) {
      const oldest = this.known.keys().next();
      if (!oldest.done) this.known.delete(oldest.value);
    }
    this.known.set(handle, payload);
  }
}
