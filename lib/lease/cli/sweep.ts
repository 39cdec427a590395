import { RedisLeaseStore } from "../redis/store";
import { formatDuration } from "../duration";
import { repeatUntilStopped } from "../stoppable-loop";
import { describeStoreError, openStore, resolveStoreSpec, STORE_OPTIONS, STORE_OPTIONS_HELP } from "./store-option";
import { EXIT, parseDurationOption, parseOptions, UsageError, type CliOutput } from "./usage";

export const SWEEP_HELP = `Usage: leasewatch sweep --store URL [--every 5s] [--once]

Records an \`expired\` event for every lease whose TTL ran out and that nobody recorded
yet (the store already enforced the expiry; this makes it visible in the history and
the console). On Redis it also brings the read models (listing, history, charts) up to
date, every second. Runs until SIGINT or SIGTERM; a sweep in progress finishes first.
A sweep that fails (store down) is reported and tried again at the next interval.

Inside the console's installation, \`leasewatch sweep\` without --store sweeps every
store the console is configured with (as \`npm run sweeper\` does).

Options:
  --every DURATION   time between sweeps (default 5s; at least 100ms)
  --once             sweep once and exit (status 69 if it failed)
  -h, --help         this help

${STORE_OPTIONS_HELP}`;

const SWEEP_OPTIONS = { ...STORE_OPTIONS, every: { type: "string" }, once: { type: "boolean" } } as const;
const DEFAULT_EVERY_MS = 5_000;
const PROJECT_EVERY_MS = 1_000;

export async function runSweep(argv: readonly string[], output: CliOutput): Promise<number> {
  const { values, positionals } = parseOptions(argv, SWEEP_OPTIONS, true);
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const everyMs = values.every === undefined ? DEFAULT_EVERY_MS : parseDurationOption(values.every, "--every");
  if (everyMs < 100) throw new UsageError("--every must be at least 100ms");
  const spec = await resolveStoreSpec(values);
  const store = openStore(spec, output, { showWarnings: true });

  const sweepOnce = async (): Promise<boolean> => {
    try {
      const { expired } = await store.sweep();
      if (expired > 0) output.out(`${spec.name}: recorded ${expired} ${expired === 1 ? "expiry" : "expiries"}`);
      return true;
    } catch (error) {
      output.err(`leasewatch: sweep of ${spec.name} failed: ${describeStoreError(error, spec)}`);
      return false;
    }
  };

  if (values.once) {
    try {
      return (await sweepOnce()) ? EXIT.OK : EXIT.STORE_UNAVAILABLE;
    } finally {
      await store.close().catch(() => undefined);
    }
  }

  output.out(`sweeping ${spec.name} every ${formatDuration(everyMs)}`);
  const loop = repeatUntilStopped(async () => {
    await sweepOnce();
  }, everyMs);
  process.on("SIGINT", loop.stop);
  process.on("SIGTERM", loop.stop);
  // Redis listing, history and charts are projected from the events: every second, as the console's sweeper does.
  let isProjecting = false;
  const projectTimer =
    store instanceof RedisLeaseStore
      ? setInterval(() => {
          if (isProjecting) return;
          isProjecting = true;
          void store
            .project()
            .catch(() => undefined)
            .finally(() => (isProjecting = false));
        }, PROJECT_EVERY_MS)
      : undefined;
  try {
    await loop.done;
    output.out(`stopped sweeping ${spec.name}`);
    return EXIT.OK;
  } finally {
    clearInterval(projectTimer);
    process.off("SIGINT", loop.stop);
    process.off("SIGTERM", loop.stop);
    await store.close().catch(() => undefined);
  }
}
