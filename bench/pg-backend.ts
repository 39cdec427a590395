/**
 * What the Postgres server-side benches share: a connection whose backend's CPU can be read from
 * /proc (the server must run on this machine), and the grouped statement's parameters for a round
 * of pairs.
 */
import pg from "pg";
import { readProcessCpuSeconds } from "./lease-bench";

export interface BackendConnection {
  client: pg.Client;
  backendPid: number;
}

export async function connectBackend(connectionString: string, applicationName: string): Promise<BackendConnection> {
  const client = new pg.Client({ connectionString, application_name: applicationName });
  client.on("error", () => undefined);
  await client.connect();
  const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  return { client, backendPid: rows[0]!.pid };
}

/** CPU µs backend `pid` has spent so far. */
export function backendCpuUs(pid: number): number {
  const seconds = readProcessCpuSeconds(pid);
  if (seconds === null) throw new Error(`cannot read the CPU of backend ${pid} (the server must run on this machine)`);
  return seconds * 1e6;
}

/**
 * The parameters of the store's grouped statement (`leaseCallsMany`) for one acquire of each
 * resource, with lease ids `ids`, and for the releases of those leases by their holders.
 */
export function groupedPairValues(resources: string[], ids: string[], task: string, ttlMs: number): { acquires: unknown[]; releases: unknown[] } {
  const none = resources.map(() => null);
  return {
    acquires: [resources, resources.map(() => "acquire"), resources.map(() => "bench"), resources.map(() => task), resources.map(() => ttlMs), ids, none],
    releases: [resources, resources.map(() => "release"), none, none, none, ids, resources.map(() => false)],
  };
}
