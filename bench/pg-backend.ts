/** One Postgres connection whose backend's CPU can be read from /proc (the server must run on this machine). */
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
