import { z } from "zod";
import { ConfigError } from "./store-config";

/**
 * How the services (lock API, sweeper) stop on SIGTERM or SIGINT: stop accepting, let the work
 * in flight finish, close the pools, exit 0. Work still unfinished when the grace is over is cut
 * off and the process exits 1, well before an orchestrator's own kill (Kubernetes: 30 s).
 */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/** LEASEWATCH_SHUTDOWN_GRACE_MS: 0 to 10 minutes, default 10 s. */
export function parseShutdownGraceMs(env: NodeJS.ProcessEnv = process.env): number {
  const parsed = z.coerce.number().int().min(0).max(600_000).safeParse(env.LEASEWATCH_SHUTDOWN_GRACE_MS?.trim() || DEFAULT_SHUTDOWN_GRACE_MS);
  if (!parsed.success) throw new ConfigError("LEASEWATCH_SHUTDOWN_GRACE_MS must be a whole number of milliseconds from 0 to 600000");
  return parsed.data;
}

export interface StopOnSignalsOptions {
  graceMs: number;
  /** Stops accepting, waits for the work in flight, closes pools. */
  stop: (signal: NodeJS.Signals) => Promise<void>;
  log: (message: string) => void;
}

/** On the first SIGTERM or SIGINT runs `stop` within the grace, then exits: 0 if it finished, 1 if not. A second signal exits at once. */
export function stopOnSignals({ graceMs, stop, log }: StopOnSignalsOptions): void {
  let isStopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (isStopping) {
      log(`${signal} again: exiting now`);
      process.exit(1);
    }
    isStopping = true;
    log(`${signal}: stopping, finishing the work in flight (grace ${graceMs} ms)`);
    const timer = setTimeout(() => {
      log(`work still in flight after the ${graceMs} ms grace: exiting without it`);
      process.exit(1);
    }, graceMs);
    stop(signal).then(
      () => {
        clearTimeout(timer);
        log("stopped");
        process.exit(0);
      },
      (error: unknown) => {
        clearTimeout(timer);
        log(`stopping failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}
