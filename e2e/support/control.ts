/**
/**
 * For specs: the e2e stack's control endpoint (loopback only, see e2e-stack.ts).
 *
 * - Stop and start its Redis store (a throwaway redis-server, never the shared
 *   one) to see the console with a store down. Restarting loses its keys (no
 *   persistence).
 * - Pause and resume it (SIGSTOP/SIGCONT): a store that hangs instead of refusing.
 * - Read the stores' configuration, to write and count through the lease library.
 * - Wait until the workload has produced every kind of event the specs look for.
 * - Change a demo user's groups at the running IdP (`setIdpGroups`). Use carol for
 *   that (alice and bob are the shared signed-in sessions of the other tests), and
 *   put her groups back in a finally.
 *
 * Tests that stop or pause the store must undo it before they finish
 * (try/finally), run serially, and be tagged @store-outage: that project runs
 * them after every other test, so no test beside them loses its keys or hangs.
 */
import type { LeaseStore } from "@leasewatch/lease";
import type { TStoreConfig } from "../../lib/server/store-config";
import { CONTROL_URL, PG_STORE, REDIS_STORE, type StackFacts } from "./harness";
import { type EventKindsReady, openStore } from "./stores";

interface StoreState {
  store: string;
  isRunning: boolean;
  isPaused?: boolean;
}

async function call<T>(method: "GET" | "POST", pathname: string, timeoutMs = 30_000): Promise<T> {
  const response = await fetch(`${CONTROL_URL}${pathname}`, { method, signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`e2e control ${method} ${pathname}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

export function stopRedisStore(): Promise<StoreState> {
  return call("POST", `/stores/${REDIS_STORE}/stop`);
}

export function startRedisStore(): Promise<StoreState> {
  return call("POST", `/stores/${REDIS_STORE}/start`);
}

export function pauseRedisStore(): Promise<StoreState> {
  return call("POST", `/stores/${REDIS_STORE}/pause`);
}

export function resumeRedisStore(): Promise<StoreState> {
  return call("POST", `/stores/${REDIS_STORE}/resume`);
}

/** The stores exactly as the console is configured with them (LEASEWATCH_STORES). */
export function readStoreConfigs(): Promise<TStoreConfig[]> {
  return call("GET", "/stores");
}

/** Resolves when both stores have acquired, released, expired and contended events; throws after `timeoutMs`. */
/** A client for the stack's store `name` (default: its Postgres store), configured as the console's is. Close it when done. */
export async function openStackStore(name: string = PG_STORE): Promise<LeaseStore> {
  const config = (await readStoreConfigs()).find((c) => c.name === name);
  if (!config) throw new Error(`the e2e stack has no store ${name}`);
  return openStore(config);
}

export function waitForWorkloadData(timeoutMs: number): Promise<EventKindsReady> {
  return call("GET", `/data-ready?timeoutMs=${timeoutMs}`, timeoutMs + 10_000);
}

/** Where the stack's stores and audit log are (see e2e-stack.ts), for specs that run real workers or check the database. */
export async function getStackFacts(): Promise<StackFacts> {
  const response = await fetch(`${CONTROL_URL}/facts`, { signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`e2e control /facts: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as StackFacts;
}

/** Replaces `user`'s groups at the demo IdP; the console sees them at its next re-read (every 2 s in the e2e stack). */
export async function setIdpGroups(user: string, groups: string[]): Promise<void> {
  const response = await fetch(`${CONTROL_URL}/idp/users/${encodeURIComponent(user)}/groups`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(groups),
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new Error(`e2e control setIdpGroups(${user}): HTTP ${response.status} ${await response.text()}`);
}

/** The demo IdP's own groups for carol, to restore after a test changed them. */
export const CAROL_GROUPS = ["leasewatch-operators"];
