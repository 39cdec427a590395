/**
 * For specs: real Postgres sessions opened as a person or a job would (psql, a
 * batch holder), closed together after the spec.
 */
import pg from "pg";

export interface PgSession {
  client: pg.Client;
  pid: number;
}

/** Sessions opened by one spec file; `closeAll` in its afterAll. */
export function pgSessions() {
  const open: pg.Client[] = [];
  return {
    async open(url: string, applicationName: string): Promise<PgSession> {
      const client = new pg.Client({ connectionString: url, application_name: applicationName });
      client.on("error", () => {});
      await client.connect();
      open.push(client);
      const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      return { client, pid };
    },
    async closeAll(): Promise<void> {
      await Promise.all(open.splice(0).map((c) => c.end().catch(() => {})));
    },
  };
}
