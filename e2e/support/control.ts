/**
 * For specs: the e2e stack's control endpoint (loopback only, see e2e-stack.ts).
 *
 * - Stop and start its Redis store (a throwaway redis-server, never the shared
 *   one) to see the console with a store down. Restarting loses its keys (no
 *   persistence).
 * - Pause and resume it (SIGSTOP/SIGCONT): a store that hangs instead of refusing.
 * - Read the stores' configuration, to write and count through the lease library.
 * - Wait until the workload has produced every kind of event the specs look for.
 *
 * Tests that stop or pause the store must undo it before they finish
 * (try/finally) and should run serially.
 */
import type { TStoreConfig } from "../../lib/console/config";
import { CONTROL_URL, REDIS_STORE } from "./harness";
import type { EventKindsReady } from "./stores";

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
export function waitForWorkloadData(timeoutMs: number): Promise<EventKindsReady> {
  return call("GET", `/data-ready?timeoutMs=${timeoutMs}`, timeoutMs + 10_000);
}
