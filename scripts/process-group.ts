/**
 * Child servers in process groups of their own (spawned detached), signalled and stopped by
 * group so no grandchild (a `next-server`, a backend) outlives them. Whatever is still running
 * when this process exits is killed then, as a last resort.
 */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";

const running = new Set<ChildProcess>();

process.once("exit", () => {
  for (const child of running) killGroupSync(child, "SIGKILL");
});

export function killGroupSync(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Group already gone.
  }
}

export function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Sends `signal` to the group; if it has not exited within `timeoutMs`, SIGKILL, and waits as long again. */
export async function stopGroup(child: ChildProcess, signal: NodeJS.Signals, timeoutMs: number): Promise<void> {
  killGroupSync(child, signal);
  if (!(await waitForExit(child, timeoutMs))) {
    killGroupSync(child, "SIGKILL");
    await waitForExit(child, timeoutMs);
  }
}

/**
 * Spawns in its own process group and keeps the last 4000 characters of its output for error
 * messages (`logs`); `onLine` also gets every non-blank line as it comes.
 */
export function spawnGroup(command: string, args: string[], options: Omit<SpawnOptions, "detached" | "stdio"> & { onLine?: (line: string) => void } = {}) {
  const { onLine, ...spawnOptions } = options;
  const child = spawn(command, args, { ...spawnOptions, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let output = "";
  const keep = (chunk: Buffer) => {
    const text = chunk.toString();
    output = (output + text).slice(-4000);
    if (onLine) for (const line of text.split("\n")) if (line.trim()) onLine(line);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  return { child, logs: () => output };
}
