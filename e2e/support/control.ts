/**
 * For specs: stop and start the e2e stack's Redis store (a throwaway
 * redis-server, never the shared one) to see the console with a store down.
 * Restarting loses its keys (no persistence). Tests that stop it must restart
 * it before they finish (try/finally) and should run serially.
 *
 * Also: change a demo user's groups at the running IdP (`setIdpGroups`). Use
 * carol for that (alice and bob are the shared signed-in sessions of the other
 * tests), and put her groups back in a finally.
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
