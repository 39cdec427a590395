/**
 * Test-side control of worker processes (worker.ts): spawn, read their JSON
 * lines, wait for a line, signal them (kill -9, SIGSTOP, SIGCONT). Each worker
 * runs in its own process group; stopAllWorkers() kills whatever is left.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import type { WorkerSpec } from "./worker";

export interface WorkerLine {
  type: string;
  pid: number;
  t: number;
  [key: string]: unknown;
}

const WORKER_PATH = path.join(__dirname, "worker.ts");
const alive = new Set<ChildProcess>();

process.once("exit", () => {
  for (const child of alive) {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {
      // gone
    }
  }
});

export class WorkerProcess {
  readonly lines: WorkerLine[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private stderr = "";
  private waiters: Array<() => void> = [];

  constructor(
    private readonly child: ChildProcess,
    readonly name: string,
  ) {
    this.exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    child.stderr?.on("data", (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-8000);
    });
    const rl = readline.createInterface({ input: child.stdout! });
    rl.on("line", (text) => {
      try {
        this.lines.push(JSON.parse(text) as WorkerLine);
      } catch {
        this.stderr += `\n[stdout] ${text}`;
      }
      for (const wake of this.waiters.splice(0)) wake();
    });
    child.once("exit", () => {
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get isRunning(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Everything the worker printed on stderr (for failure messages). */
  get errors(): string {
    return this.stderr;
  }

  linesOf(type: string): WorkerLine[] {
    return this.lines.filter((l) => l.type === type);
  }

  /** Resolves with the first line (already seen or future, from line index `fromIndex`) matching `match`. */
  async waitFor(match: (line: WorkerLine) => boolean, timeoutMs = 15_000, fromIndex = 0): Promise<WorkerLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.lines.slice(fromIndex).find(match);
      if (found) return found;
      if (!this.isRunning) throw new Error(`${this.name} exited without the expected line; lines: ${JSON.stringify(this.lines.slice(-10))}\nstderr: ${this.stderr}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.name}: expected line not seen in ${timeoutMs} ms; last lines: ${JSON.stringify(this.lines.slice(-10))}\nstderr: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Signals the worker's whole process group. */
  signal(signal: NodeJS.Signals): void {
    if (!this.isRunning) return;
    process.kill(-this.pid, signal);
  }

  async kill9(): Promise<void> {
    this.signal("SIGKILL");
    await this.exited;
  }
}

export function spawnWorker(spec: WorkerSpec, name = spec.owner): WorkerProcess {
  const child = spawn(process.execPath, ["--import", "tsx", WORKER_PATH], {
    cwd: path.resolve(__dirname, "../.."),
    env: { ...process.env, LW_WORKER_SPEC: JSON.stringify(spec) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  alive.add(child);
  child.once("exit", () => alive.delete(child));
  return new WorkerProcess(child, name);
}

/** Kills every worker still running (use in afterAll / afterEach). */
export async function stopAllWorkers(): Promise<void> {
  const children = [...alive];
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          try {
            process.kill(-child.pid!, "SIGKILL");
          } catch {
            resolve();
          }
        }),
    ),
  );
}
