import { spawn, type ChildProcess } from "node:child_process";
import { constants as osConstants, hostname } from "node:os";
import { LeaseClient } from "../client";
import { AcquireTimeoutError, LeaseError, LeaseLostError } from "../errors";
import { MAX_NAME_BYTES, MAX_TTL_MS, ZOwner, ZResource, ZTask, ZTtlMs } from "../validation";
import { formatDuration } from "../duration";
import { describeStoreError, openStore, resolveStoreSpec, STORE_OPTIONS, STORE_OPTIONS_HELP } from "./store-option";
import { EXIT, parseDurationOption, parseOptions, UsageError, type CliOutput } from "./usage";
import type { LockStore } from "../types";

export const EXEC_HELP = `Usage: leasewatch exec --store URL --resource NAME --ttl DURATION [options] -- COMMAND [ARGS…]

Holds a lease on NAME while COMMAND runs, as flock(1) does, with a lease's guarantees:
the lease is renewed every ttl/3 while the command runs and released when it exits;
if the lease is lost (a renewal refused, or no successful renewal before the lease
would lapse) the command gets SIGTERM, then SIGKILL after --kill-grace. Its fencing
token only ever goes up: hand it to every write the command makes.

The command runs in its own process group; SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to
leasewatch are passed on to that group, and the lease is held until the command exits.
Its environment adds:
  LEASEWATCH_FENCING_TOKEN  the lease's fencing token (a decimal integer)
  LEASEWATCH_LEASE_ID       the lease's id
  LEASEWATCH_RESOURCE       NAME
  LEASEWATCH_DEADLINE_MS    Unix time (ms, this machine's clock) until which the lease is
                            good even if no renewal succeeds, as of the command's start

Options:
  --resource NAME         what to lock, e.g. tenant_123:billing-close (required)
  --ttl DURATION          lease time-to-live: 500ms, 10s, 2m… (100ms to 24h; required)
  --wait DURATION         keep trying this long while someone else holds it; 0 for one attempt
                          (default: 24h, the longest a lease client waits)
  --owner TEXT            who holds it, shown in the console (default: hostname:pid)
  --task TEXT             what it is doing, shown in the console (default: the command line)
  --kill-grace DURATION   after SIGTERM on a lost lease, SIGKILL this much later (default: 5s)
  -v, --verbose           say on stderr when the lease is acquired, renewed and released,
                          and what the store warns about (e.g. Redis without persistence)
  -h, --help              this help

${STORE_OPTIONS_HELP}

Exit status:
  the command's own, or 128+N when it died of signal N
  2    usage error (bad option, duration or store URL)
  69   the store could not be reached or refused the request
  75   not acquired within --wait (someone else holds it)
  76   the lease was lost while the command ran (the command was stopped)
  126  the command could not be run;  127  the command was not found

Example:
  leasewatch exec --store redis://127.0.0.1:6379 --resource demo:cron --ttl 5s \\
    -- sh -c 'echo "token $LEASEWATCH_FENCING_TOKEN"; sleep 2'`;

const DEFAULT_KILL_GRACE_MS = 5_000;
/** Like flock(1) without -n, exec waits for the lease by default, as long as LeaseClient allows. */
const DEFAULT_WAIT_MS = MAX_TTL_MS;
/** Signals passed on to the command. SIGUSR1 is Node's debugger signal, so it is not taken over. */
const FORWARDED_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const;
/** How often the process group is checked for survivors after a lost lease. */
const GROUP_POLL_MS = 50;

const EXEC_OPTIONS = {
  ...STORE_OPTIONS,
  resource: { type: "string" },
  ttl: { type: "string" },
  wait: { type: "string" },
  owner: { type: "string" },
  task: { type: "string" },
  "kill-grace": { type: "string" },
  verbose: { type: "boolean", short: "v" },
} as const;

export interface ExecPlan {
  resource: string;
  ttlMs: number;
  waitMs: number;
  owner: string;
  task: string;
  killGraceMs: number;
  verbose: boolean;
  command: string;
  args: string[];
}

function checked<T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: Array<{ message: string }> } } }, value: unknown, option: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new UsageError(`${option}: ${result.error.issues[0]?.message ?? "invalid"}`);
  return result.data;
}

/** The command line as a task name: one line of printable text, cut to the length a task may have. */
export function taskFromCommand(argv: readonly string[]): string {
  const line = argv.join(" ").replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").trim();
  const bytes = Buffer.from(line, "utf8");
  if (bytes.length <= MAX_NAME_BYTES) return line;
  // Cut on a character boundary: decoding a cut multi-byte sequence would add U+FFFD.
  let cut = line;
  while (Buffer.byteLength(cut, "utf8") > MAX_NAME_BYTES - 3) cut = cut.slice(0, -1);
  return `${cut}...`;
}

export function parseExecArgs(argv: readonly string[]): { plan: ExecPlan; storeValues: { store?: string; schema?: string; namespace?: string } } {
  const separator = argv.indexOf("--");
  const { values, positionals } = parseOptions(separator === -1 ? argv : argv.slice(0, separator), EXEC_OPTIONS, true);
  const command = separator === -1 ? [] : argv.slice(separator + 1);
  if (positionals.length > 0) throw new UsageError(`put the command after "--": leasewatch exec [options] -- ${positionals.join(" ")}`);
  if (command.length === 0 || !command[0]) throw new UsageError('no command: leasewatch exec [options] -- COMMAND [ARGS…]');
  if (values.resource === undefined) throw new UsageError("--resource is required");
  if (values.ttl === undefined) throw new UsageError("--ttl is required (e.g. --ttl 10s)");
  const ttlMs = checked(ZTtlMs, parseDurationOption(values.ttl, "--ttl"), "--ttl");
  const waitMs = values.wait === undefined ? DEFAULT_WAIT_MS : parseDurationOption(values.wait, "--wait");
  if (waitMs > MAX_TTL_MS) throw new UsageError("--wait must be at most 24h");
  const killGraceMs = values["kill-grace"] === undefined ? DEFAULT_KILL_GRACE_MS : parseDurationOption(values["kill-grace"], "--kill-grace");
  if (killGraceMs > 3_600_000) throw new UsageError("--kill-grace must be at most 1h");
  const plan: ExecPlan = {
    resource: checked(ZResource, values.resource, "--resource"),
    ttlMs,
    waitMs,
    owner: checked(ZOwner, values.owner ?? `${hostname()}:${process.pid}`, "--owner"),
    task: checked(ZTask, values.task ?? taskFromCommand(command), "--task"),
    killGraceMs,
    verbose: values.verbose === true,
    command: command[0],
    args: command.slice(1),
  };
  return { plan, storeValues: { store: values.store, schema: values.schema, namespace: values.namespace } };
}

type ChildOutcome = { kind: "exited"; code: number | null; signal: NodeJS.Signals | null } | { kind: "spawn_failed"; error: NodeJS.ErrnoException };

class Interrupted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`);
  }
}

function signalStatus(signal: NodeJS.Signals): number {
  return 128 + (osConstants.signals[signal] ?? 0);
}

/** Sends `signal` to every process in the child's group; false when none is left. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals | 0): boolean {
  if (child.pid === undefined) return false;
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `leasewatch exec`. The lease is taken and kept by LeaseClient.withLease (heartbeat
 * at ttl/3, local deadline, release in finally); this adds the process: the command runs
 * as the work, and a lost lease (withLease aborts the work's signal) stops it.
 */
export async function runExec(argv: readonly string[], output: CliOutput): Promise<number> {
  const { plan, storeValues } = parseExecArgs(argv);
  const spec = await resolveStoreSpec(storeValues);
  // exec only takes and keeps a lease: the lock is all it uses of the store.
  const store: LockStore = openStore(spec, output, { showWarnings: plan.verbose });
  const say = (line: string) => output.err(`leasewatch: ${line}`);
  const verbose = (line: string) => plan.verbose && say(line);

  // The wait is cancelled by a signal; once the command runs, signals go to it instead.
  const waitAbort = new AbortController();
  let phase: "waiting" | "running" | "finishing" = "waiting";
  let child: ChildProcess | undefined;
  let isLossAnnounced = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (phase === "waiting") waitAbort.abort(new Interrupted(signal));
    else if (phase === "running" && child) signalGroup(child, signal);
    // A second signal while releasing: stop now, the lease lapses on its TTL.
    else process.exit(signalStatus(signal));
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, onSignal);

  const client = new LeaseClient(store, {
    owner: plan.owner,
    onEvent: (event) => {
      if (event.type === "renewed") verbose(`renewed ${plan.resource} (renewal ${event.renewals})`);
      else if (event.type === "renew_error") verbose(`renewal of ${plan.resource} failed, retrying: ${describeStoreError(event.error, spec)}`);
      else if (event.type === "released" && event.result.released) verbose(`released ${plan.resource}`);
      else if (event.type === "release_error") say(`could not release ${plan.resource} (it lapses on its TTL): ${describeStoreError(event.error, spec)}`);
    },
  });

  try {
    const outcome = await client.withLease(
      plan.resource,
      ({ signal, fencingToken, lease, remainingMs }) => {
        phase = "running";
        verbose(`acquired ${plan.resource} on ${spec.name} (fencing token ${fencingToken}, lease ${lease.leaseId})`);
        return new Promise<ChildOutcome>((resolve) => {
          let killTimer: ReturnType<typeof setTimeout> | undefined;
          let isLost = false;
          let hasExited = false;
          const spawned = spawn(plan.command, plan.args, {
            stdio: "inherit",
            // Its own process group, so a lost lease stops the whole command (`sh -c 'a; b'`), not just its first process.
            detached: true,
            env: {
              ...process.env,
              LEASEWATCH_FENCING_TOKEN: fencingToken,
              LEASEWATCH_LEASE_ID: lease.leaseId,
              LEASEWATCH_RESOURCE: plan.resource,
              LEASEWATCH_DEADLINE_MS: String(Math.floor(Date.now() + Math.max(0, remainingMs()))),
            },
          });
          child = spawned;
          // Once lost, nothing in the group may outlive the grace: poll for survivors after the command exits.
          const awaitGroupGone = (result: ChildOutcome, until: number) => {
            if (!signalGroup(spawned, 0)) return resolve(result);
            if (Date.now() >= until) {
              signalGroup(spawned, "SIGKILL");
              return resolve(result);
            }
            setTimeout(() => awaitGroupGone(result, until), GROUP_POLL_MS);
          };
          let graceEndsAt = 0;
          spawned.on("error", (error: NodeJS.ErrnoException) => {
            if (hasExited) return;
            hasExited = true;
            clearTimeout(killTimer);
            resolve({ kind: "spawn_failed", error });
          });
          spawned.on("exit", (code, exitSignal) => {
            hasExited = true;
            const result: ChildOutcome = { kind: "exited", code, signal: exitSignal };
            if (!isLost) {
              clearTimeout(killTimer);
              return resolve(result);
            }
            awaitGroupGone(result, graceEndsAt);
          });
          const onLost = () => {
            const reason = signal.reason instanceof LeaseLostError ? signal.reason.reason : "aborted";
            isLost = true;
            isLossAnnounced = true;
            graceEndsAt = Date.now() + plan.killGraceMs;
            say(`lost the lease on ${plan.resource} (${reason}); stopping the command: SIGTERM now, SIGKILL in ${formatDuration(plan.killGraceMs)}`);
            signalGroup(spawned, "SIGTERM");
            killTimer = setTimeout(() => signalGroup(spawned, "SIGKILL"), plan.killGraceMs);
          };
          if (signal.aborted) onLost();
          else signal.addEventListener("abort", onLost, { once: true });
        }).finally(() => {
          phase = "finishing";
        });
      },
      { task: plan.task, ttlMs: plan.ttlMs, waitMs: plan.waitMs, signal: waitAbort.signal },
    );
    if (outcome.kind === "spawn_failed") {
      const isMissing = outcome.error.code === "ENOENT";
      say(`cannot run ${plan.command}: ${isMissing ? "command not found" : outcome.error.message}`);
      return isMissing ? EXIT.NOT_FOUND : EXIT.CANNOT_EXECUTE;
    }
    if (outcome.signal) return signalStatus(outcome.signal);
    return outcome.code ?? EXIT.FAILURE;
  } catch (error) {
    if (error instanceof Interrupted) return signalStatus(error.signal);
    if (error instanceof LeaseLostError) {
      // Found only when the release was refused: the command had finished, but not within the lease.
      if (!isLossAnnounced) say(`lost the lease on ${plan.resource} (${error.reason}) before the command finished`);
      return EXIT.LEASE_LOST;
    }
    if (error instanceof AcquireTimeoutError) {
      const held = error.holder ? `: held by ${error.holder.owner} (${error.holder.task})` : "";
      say(`${plan.resource} is taken${plan.waitMs > 0 ? `, still after ${formatDuration(plan.waitMs)}` : ""}${held}`);
      return EXIT.NOT_ACQUIRED;
    }
    if (error instanceof LeaseError && error.code === "invalid_input") {
      say(error.message);
      return EXIT.USAGE;
    }
    say(`store ${spec.name}: ${describeStoreError(error, spec)}`);
    return EXIT.STORE_UNAVAILABLE;
  } finally {
    for (const signal of FORWARDED_SIGNALS) process.off(signal, onSignal);
    await store.close().catch(() => undefined);
  }
}
