/**
 * For specs: stop and start the e2e stack's Redis store (a throwaway
 * redis-server, never the shared one) to see the console with a store down.
 * Restarting loses its keys (no persistence). Tests that stop it must restart
 * it before they finish (try/finally) and should run serially.
 */
import { CONTROL_URL, REDIS_STORE, type StackFacts } from "./harness";

async function post(pathname: string): Promise<{ store: string; isRunning: boolean }> {
  const response = await fetch(`${CONTROL_URL}${pathname}`, { method: "POST", signal: AbortSignal.timeout(30_000) });
  if (!response.ok) throw new Error(`e2e control ${pathname}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as { store: string; isRunning: boolean };
}

export function stopRedisStore(): Promise<{ store: string; isRunning: boolean }> {
  return post(`/stores/${REDIS_STORE}/stop`);
}

export function startRedisStore(): Promise<{ store: string; isRunning: boolean }> {
  return post(`/stores/${REDIS_STORE}/start`);
}

/** Where the stack's stores and audit log are (see e2e-stack.ts), for specs that run real workers or check the database. */
export async function getStackFacts(): Promise<StackFacts> {
  const response = await fetch(`${CONTROL_URL}/facts`, { signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`e2e control /facts: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as StackFacts;
}
