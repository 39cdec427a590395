/**
 * The console process's shutdown, shared by its server entry (scripts/console.ts) and the app's
 * own modules. The two are bundled apart (esbuild, Next.js), so the state lives on globalThis.
 */
interface Lifecycle {
  isStopping: boolean;
  closers: Array<() => Promise<void>>;
}
const KEY = Symbol.for("leasewatch.console.lifecycle");

function lifecycle(): Lifecycle {
  const g = globalThis as typeof globalThis & { [KEY]?: Lifecycle };
  g[KEY] ??= { isStopping: false, closers: [] };
  return g[KEY];
}

/** From now on /readyz answers 503, so load balancers stop sending requests here. */
export function markConsoleStopping(): void {
  lifecycle().isStopping = true;
}

export function isConsoleStopping(): boolean {
  return lifecycle().isStopping;
}

/** `close` runs once the server has answered its last request (pools, timers). */
export function onConsoleClose(close: () => Promise<void>): void {
  lifecycle().closers.push(close);
}

/** Runs every registered close; one that fails does not stop the others. */
export async function runConsoleCloseHooks(): Promise<void> {
  const closers = lifecycle().closers.splice(0);
  await Promise.allSettled(closers.map((close) => close()));
}
