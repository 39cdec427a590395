/**
 * `npm start` (`node dist/console.js`): the console's production server, the Next.js build in
 * .next served by Next's request handler. It does what `next start` does, and shuts down as the
 * lock API and the sweeper do: on SIGTERM/SIGINT /readyz answers 503, the listener closes, the
 * requests in flight are answered (kept-alive connections are closed as they go idle instead
 * of holding the exit for their keep-alive timeout), then the pools are closed and it exits 0,
 * within LEASEWATCH_SHUTDOWN_GRACE_MS (lib/server/shutdown.ts).
 *
 * PORT (default 3000) and LEASEWATCH_CONSOLE_HOST (default 0.0.0.0, all interfaces, as `next start`).
 * Idle connections are kept 65 s, longer than the usual load balancer's 60 s, so the balancer
 * closes them first and never sends a request down a connection this server is closing.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import next from "next";
import { z } from "zod";
import { markConsoleStopping, runConsoleCloseHooks } from "@/lib/console/health/lifecycle";
import { EnvError } from "../lib/auth/env";
import { parseShutdownGraceMs, stopOnSignals } from "../lib/server/shutdown";
import { initLogger } from "../lib/log/logger";

const KEEP_ALIVE_TIMEOUT_MS = 65_000;
const IDLE_SWEEP_MS = 100;

const log = initLogger("console");

async function main(): Promise<void> {
  const port = z.coerce.number().int().min(0).max(65535).safeParse(process.env.PORT?.trim() || 3000);
  if (!port.success) throw new EnvError("PORT must be a port number");
  const host = process.env.LEASEWATCH_CONSOLE_HOST?.trim() || "0.0.0.0";
  const graceMs = parseShutdownGraceMs();
  if (!process.env.NODE_ENV) Object.assign(process.env, { NODE_ENV: "production" });

  // dist/console.js runs from the repository root's dist/; the build is in ../.next.
  const app = next({ dev: false, dir: path.resolve(__dirname, ".."), hostname: host, port: port.data });
  await app.prepare();
  const handle = app.getRequestHandler();
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      log.error({ err: error, method: request.method, url: request.url }, "request failed");
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port.data, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const url = `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${bound}`;
  log.info({ url }, `listening at ${url}`);

  stopOnSignals({
    graceMs,
    log: (message) => log.info(message),
    stop: async () => {
      markConsoleStopping();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const closeIdle = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
      try {
        await closed;
      } finally {
        clearInterval(closeIdle);
      }
      await app.close();
      await runConsoleCloseHooks();
    },
  });
}

main().catch((error: unknown) => {
  log.fatal({ error: error instanceof Error ? error.message : String(error) }, "could not start");
  process.exit(1);
});
