/**
 * Lease handles: the `{leaseId}` in `/v1/locks/{leaseId}`. A handle carries the
 * store, resource, library lease id and ttl, and an HMAC-SHA256 over them with the
 * server's key, so a client can neither forge one nor edit one to reach another
 * resource. It is opaque to clients but not secret: it names the resource, which
 * its holder already knows.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";

export interface HandlePayload {
  store: string;
  resource: string;
  leaseId: string;
  ttlMs: number;
}

const ZPayload = z.tuple([z.string(), z.string(), z.string(), z.number().int()]);
const MAC_BYTES = 32;
export const MIN_HANDLE_KEY_BYTES = 32;

function mac(key: Buffer, body: string): Buffer {
  return createHmac("sha256", key).update(`leasewatch.handle.v1\n${body}`).digest();
}

export function encodeHandle(key: Buffer, payload: HandlePayload): string {
  const body = Buffer.from(JSON.stringify([payload.store, payload.resource, payload.leaseId, payload.ttlMs]), "utf8").toString("base64url");
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
    const [store, resource, leaseId, ttlMs] = parsed.data;
    return { store, resource, leaseId, ttlMs };
  } catch {
    return null;
  }
}
