/**
 * The sweeper's own health and metrics, so a sweeper that died or hangs is an alert
 * (ops/alerts.yml: LeasewatchSweeperDown) rather than leases the
 * console shows as held long after their TTL ran out.
 *
 *   GET /livez    200 while the sweep loop turns (a round finished within the window), else 503
 *   GET /readyz   200 once every store's latest sweep succeeded, 503 before, after a failure, and while stopping
 *   GET /metrics  Prometheus text, `Authorization: Bearer $METRICS_TOKEN` as for the console and the API
 *
 * The probes answer status only: they need no token, so they name no store.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import type { SweepOutcome } from "./store-registry";
import { isSameToken } from "./metrics-token";

export class SweeperStatus {
  readonly registry = new Registry();
  private readonly lastSuccess: Gauge<"store">;
  private readonly sweeps: Counter<"store">;
  private readonly errors: Counter<"store">;
  private readonly expired: Counter<"store">;
  private readonly lastFailed = new Map<string, boolean>();
  private lastRoundAt: number;
  private isStopping = false;

  /** `livenessWindowMs`: a loop that has not finished a round for this long is not alive. */
  constructor(
    stores: readonly string[],
    private readonly livenessWindowMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.lastRoundAt = now();
    const registers = [this.registry];
    this.lastSuccess = new Gauge({
      name: "leasewatch_sweeper_last_success_timestamp_seconds",
      help: "When the sweeper last swept the store successfully (Unix seconds; 0 before the first success)",
      labelNames: ["store"],
      registers,
    });
    this.sweeps = new Counter({ name: "leasewatch_sweeper_sweeps_total", help: "Sweeps attempted, by store", labelNames: ["store"], registers });
    this.errors = new Counter({ name: "leasewatch_sweeper_errors_total", help: "Sweeps that failed, by store", labelNames: ["store"], registers });
    this.expired = new Counter({ name: "leasewatch_sweeper_expired_recorded_total", help: "Expiries the sweeper recorded, by store", labelNames: ["store"], registers });
    // Every store has its series from the start, so "never swept" reads as 0, not as absent.
    for (const store of stores) {
      this.lastSuccess.set({ store }, 0);
      this.sweeps.inc({ store }, 0);
      this.errors.inc({ store }, 0);
      this.expired.inc({ store }, 0);
    }
    collectDefaultMetrics({ register: this.registry });
  }

  recordRound(outcomes: readonly SweepOutcome[]): void {
    this.lastRoundAt = this.now();
    for (const outcome of outcomes) {
      const labels = { store: outcome.store };
      this.sweeps.inc(labels);
      if (outcome.error !== undefined) {
        this.errors.inc(labels);
        this.lastFailed.set(outcome.store, true);
      } else {
        this.lastSuccess.set(labels, this.now() / 1000);
        this.expired.inc(labels, outcome.expired);
        this.lastFailed.set(outcome.store, false);
      }
    }
  }

  markStopping(): void {
    this.isStopping = true;
  }

  isAlive(): boolean {
    return this.now() - this.lastRoundAt <= this.livenessWindowMs;
  }

  isReady(): boolean {
    return !this.isStopping && this.lastFailed.size > 0 && [...this.lastFailed.values()].every((failed) => !failed);
  }
}

export interface SweeperHealthServer {
  url: string;
  close(): Promise<void>;
}

export async function startSweeperHealthServer(options: { host: string; port: number; status: SweeperStatus; metricsToken: string | null }): Promise<SweeperHealthServer> {
  const { status, metricsToken } = options;
  const server: Server = createServer((request, response) => {
    const send = (code: number, body: unknown, type = "application/json; charset=utf-8") => {
      response.writeHead(code, { "content-type": type, "cache-control": "no-store" });
      response.end(typeof body === "string" ? body : JSON.stringify(body));
    };
    const path = (request.url ?? "/").split("?")[0];
    if (request.method !== "GET" && request.method !== "HEAD") return send(405, { error: "Only GET is served here." });
    if (path === "/livez") {
      const ok = status.isAlive();
      return send(ok ? 200 : 503, { ok });
    }
    if (path === "/readyz") {
      const ready = status.isReady();
      return send(ready ? 200 : 503, { ready });
    }
    if (path === "/metrics") {
      const header = request.headers.authorization;
      const bearer = header?.startsWith("Bearer ") ? header.slice(7).trim() : "";
      if (!metricsToken || !isSameToken(bearer, metricsToken)) {
        return send(401, { error: "Scrape /metrics with Authorization: Bearer <METRICS_TOKEN>; set METRICS_TOKEN on the sweeper (32-256 characters)." });
      }
      status.registry.metrics().then(
        (text) => send(200, text, status.registry.contentType),
        () => send(500, { error: "metrics could not be collected" }),
      );
      return;
    }
    send(404, { error: "Not found: this port serves /livez, /readyz and /metrics." });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
