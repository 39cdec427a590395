import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { runCli, startCli } from "@/test/support/cli-process";
import { sleep } from "../testing/isolation";
import { parseExecArgs, taskFromCommand } from "./exec";
import { resolveStoreSpec } from "./store-option";
import { EXIT, UsageError } from "./usage";

const HAS_PYTHON = spawnSync("python3", ["--version"]).status === 0;

/** The --store flags that point the command at the fixture's isolated schema / namespace. */
function storeFlags(fixture: StoreFixture): string[] {
  const { spec } = fixture;
  return spec.kind === "postgres" ? ["--store", spec.url, "--schema", spec.schema] : ["--store", spec.url, "--namespace", spec.namespace];
}

async function readWhenPresent(file: string, until: (text: string) => boolean, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await readFile(file, "utf8").catch(() => "");
    if (until(text)) return text;
    if (Date.now() > deadline) throw new Error(`${file} never matched; it holds: ${JSON.stringify(text)}`);
    await sleep(50);
  }
}

/** Running (a zombie waiting for a parent to reap it counts as gone: it runs no more code). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

describe.each(["redis", "postgres"] as const)("leasewatch exec on %s", (kind) => {
  let fixture: StoreFixture;
  let dir: string;
  beforeAll(async () => {
    fixture = await createStoreFixture(kind);
    dir = await mkdtemp(path.join(tmpdir(), "lw-exec-"));
  });
  afterAll(async () => {
    await fixture?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("runs commands started at once one after the other (waiting by default), each with a higher fencing token, recorded with owner and task", async () => {
    const log = path.join(dir, "overlap.log");
    // Each child logs its start and end (ns since the epoch) with its token.
    const script = `echo "start $(date +%s%N) $LEASEWATCH_FENCING_TOKEN" >> ${log}; sleep 0.7; echo "end $(date +%s%N) $LEASEWATCH_FENCING_TOKEN" >> ${log}`;
    const runs = await Promise.all(
      [1, 2, 3].map((n) =>
        runCli(["exec", ...storeFlags(fixture), "--resource", "cli:overlap", "--ttl", "2s", "--owner", `runner-${n}`, "--", "sh", "-c", script]),
      ),
    );
    for (const run of runs) expect(run, run.stderr).toMatchObject({ code: 0 });

    const lines = (await readFile(log, "utf8")).trim().split("\n").map((l) => l.split(" "));
    expect(lines).toHaveLength(6);
    // Never two holders at once: every start follows the previous end, in the log's order and by the clock.
    const holds = [];
    for (let i = 0; i < lines.length; i += 2) {
      const [startWord, startNs, startToken] = lines[i]!;
      const [endWord, endNs, endToken] = lines[i + 1]!;
      expect([startWord, endWord, endToken]).toEqual(["start", "end", startToken]);
      holds.push({ start: BigInt(startNs!), end: BigInt(endNs!), token: BigInt(startToken!) });
    }
    for (let i = 1; i < holds.length; i++) {
      expect(holds[i]!.start).toBeGreaterThan(holds[i - 1]!.end);
      expect(holds[i]!.token).toBeGreaterThan(holds[i - 1]!.token);
    }

    const events = await fixture.store.events({ resource: "cli:overlap", kinds: ["acquired", "released"], order: "asc", limit: 100 });
    const acquired = events.items.filter((e) => e.kind === "acquired");
    expect(acquired.map((e) => e.fencingToken)).toEqual(holds.map((h) => h.token.toString()));
    expect(new Set(acquired.map((e) => e.owner))).toEqual(new Set(["runner-1", "runner-2", "runner-3"]));
    for (const event of acquired) expect(event.task).toBe(`sh -c ${script}`);
    expect(events.items.filter((e) => e.kind === "released")).toHaveLength(3);
    expect(await fixture.store.get("cli:overlap")).toBeNull();
  });

  it("gives a shell command the lease's token, id, resource and deadline, and owner hostname:pid by default", async () => {
    const before = Date.now();
    const run = await runCli([
      "exec", ...storeFlags(fixture), "--resource", "cli:env", "--ttl", "5s", "--",
      "sh", "-c", 'echo "$LEASEWATCH_FENCING_TOKEN $LEASEWATCH_LEASE_ID $LEASEWATCH_RESOURCE $LEASEWATCH_DEADLINE_MS"',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const [token, leaseId, resource, deadline] = run.stdout.trim().split(" ");
    const [acquired] = (await fixture.store.events({ resource: "cli:env", kinds: ["acquired"] })).items;
    expect(acquired).toMatchObject({ fencingToken: token, leaseId, resource: "cli:env" });
    expect(resource).toBe("cli:env");
    expect(acquired!.owner).toMatch(/^.+:\d+$/);
    expect(Number(deadline)).toBeGreaterThan(before);
    expect(Number(deadline)).toBeLessThanOrEqual(Date.now() + 5_000);
  });

  it.skipIf(!HAS_PYTHON)("gives a Python command the fencing token (skipped when python3 is not installed)", async () => {
    const run = await runCli([
      "exec", ...storeFlags(fixture), "--resource", "cli:python", "--ttl", "5s", "--task", "python-reader", "--",
      "python3", "-c", "import os; print('token=' + os.environ['LEASEWATCH_FENCING_TOKEN'])",
    ]);
    expect(run.code, run.stderr).toBe(0);
    const [acquired] = (await fixture.store.events({ resource: "cli:python", kinds: ["acquired"] })).items;
    expect(acquired?.task).toBe("python-reader");
    expect(run.stdout.trim()).toBe(`token=${acquired!.fencingToken}`);
  });

  it("stops a command whose lease was force-released: SIGTERM, exit 76", async () => {
    const marker = path.join(dir, "terminated.txt");
    const cli = startCli([
      "exec", ...storeFlags(fixture), "--resource", "cli:lost-term", "--ttl", "900ms", "--",
      "sh", "-c", `trap 'echo got-TERM >> ${marker}; exit 0' TERM; echo "$LEASEWATCH_LEASE_ID" > ${marker}.id; while :; do sleep 0.05; done`,
    ]);
    const leaseId = (await readWhenPresent(`${marker}.id`, (t) => t.endsWith("\n"))).trim();
    const ended = await fixture.store.forceRelease({ resource: "cli:lost-term", leaseId, actor: "test", reason: "make the lease lost" });
    expect(ended.released).toBe(true);
    const run = await cli.exited;
    expect(run.code).toBe(EXIT.LEASE_LOST);
    expect(await readFile(marker, "utf8")).toBe("got-TERM\n");
    expect(run.stderr).toContain("lost the lease on cli:lost-term (not_owner)");
    const lost = await fixture.store.events({ resource: "cli:lost-term", kinds: ["lost"] });
    expect(lost.items.map((e) => e.leaseId)).toEqual([leaseId]);
  });

  it("kills a command that ignores SIGTERM after --kill-grace, with everything in its process group", async () => {
    const pids = path.join(dir, "stubborn.pids");
    // The shell and its background child both ignore SIGTERM (an ignored signal stays ignored across exec).
    const cli = startCli([
      "exec", ...storeFlags(fixture), "--resource", "cli:lost-kill", "--ttl", "900ms", "--kill-grace", "500ms", "--",
      "sh", "-c", `trap '' TERM; sleep 60 & echo "$$ $! $LEASEWATCH_LEASE_ID" > ${pids}; wait`,
    ]);
    const [shellPid, sleepPid, leaseId] = (await readWhenPresent(pids, (t) => t.endsWith("\n"))).trim().split(" ");
    expect(isAlive(Number(sleepPid))).toBe(true);
    await fixture.store.forceRelease({ resource: "cli:lost-kill", leaseId: leaseId!, actor: "test", reason: "make the lease lost" });
    const run = await cli.exited;
    expect(run.code).toBe(EXIT.LEASE_LOST);
    expect(run.stderr).toContain("SIGKILL in 500ms");
    expect(isAlive(Number(shellPid))).toBe(false);
    expect(isAlive(Number(sleepPid))).toBe(false);
  });

  it("stops the command when leasewatch was paused past the lease's TTL (no renewal in time), and another holder got a higher token", async () => {
    const marker = path.join(dir, "paused.txt");
    const cli = startCli([
      "exec", ...storeFlags(fixture), "--resource", "cli:paused", "--ttl", "600ms", "--",
      "sh", "-c", `trap 'echo got-TERM >> ${marker}; exit 0' TERM; echo "$LEASEWATCH_FENCING_TOKEN" > ${marker}.token; while :; do sleep 0.05; done`,
    ]);
    const firstToken = (await readWhenPresent(`${marker}.token`, (t) => t.endsWith("\n"))).trim();
    // Renewals stop while the process is stopped; the store expires the lease and hands it on.
    cli.child.kill("SIGSTOP");
    let taken;
    for (let i = 0; i < 100 && !taken?.acquired; i++) {
      await sleep(100);
      taken = await fixture.store.acquire({ resource: "cli:paused", owner: "next-holder", task: "t", ttlMs: 30_000 });
    }
    expect(taken?.acquired).toBe(true);
    if (!taken?.acquired) return;
    expect(BigInt(taken.lease.fencingToken)).toBeGreaterThan(BigInt(firstToken));
    cli.child.kill("SIGCONT");
    const run = await cli.exited;
    expect(run.code).toBe(EXIT.LEASE_LOST);
    expect(await readFile(marker, "utf8")).toBe("got-TERM\n");
    // The new holder keeps its lease: the old one's release compares the lease id.
    expect((await fixture.store.get("cli:paused"))?.leaseId).toBe(taken.lease.leaseId);
  });

  it("after a lost lease, also kills what the command left running in its group once the grace is over", async () => {
    const pids = path.join(dir, "leftover.pids");
    // The shell exits on SIGTERM; the background job it started ignores SIGTERM.
    const cli = startCli([
      "exec", ...storeFlags(fixture), "--resource", "cli:lost-leftover", "--ttl", "900ms", "--kill-grace", "500ms", "--",
      "sh", "-c", `trap 'exit 0' TERM; (trap '' TERM; exec sleep 60) & echo "$! $LEASEWATCH_LEASE_ID" > ${pids}; while :; do sleep 0.05; done`,
    ]);
    const [leftoverPid, leaseId] = (await readWhenPresent(pids, (t) => t.endsWith("\n"))).trim().split(" ");
    await fixture.store.forceRelease({ resource: "cli:lost-leftover", leaseId: leaseId!, actor: "test", reason: "make the lease lost" });
    const run = await cli.exited;
    expect(run.code).toBe(EXIT.LEASE_LOST);
    expect(isAlive(Number(leftoverPid))).toBe(false);
  });

  it("exits with the command's status, or 128 + the signal that ended it, and releases the lease", async () => {
    const failed = await runCli(["exec", ...storeFlags(fixture), "--resource", "cli:status", "--ttl", "2s", "--", "sh", "-c", "exit 7"]);
    expect(failed.code).toBe(7);
    const killed = await runCli(["exec", ...storeFlags(fixture), "--resource", "cli:status", "--ttl", "2s", "--", "sh", "-c", "kill -USR1 $$"]);
    expect(killed.code).toBe(128 + 10);
    expect(await fixture.store.get("cli:status")).toBeNull();
    const released = await fixture.store.events({ resource: "cli:status", kinds: ["released"] });
    expect(released.items).toHaveLength(2);
  });

  it("exits 75 when the resource stays taken for --wait, naming the holder, and never runs the command", async () => {
    const held = await fixture.store.acquire({ resource: "cli:taken", owner: "other-host:42", task: "nightly", ttlMs: 30_000 });
    expect(held.acquired).toBe(true);
    const marker = path.join(dir, "never.txt");
    const run = await runCli(["exec", ...storeFlags(fixture), "--resource", "cli:taken", "--ttl", "2s", "--wait", "300ms", "--", "sh", "-c", `touch ${marker}`]);
    expect(run.code).toBe(EXIT.NOT_ACQUIRED);
    expect(run.stderr).toContain("held by other-host:42 (nightly)");
    await expect(readFile(marker)).rejects.toThrow();
  });

  it("passes SIGTERM on to the command and releases the lease when it exits", async () => {
    const marker = path.join(dir, "forwarded.txt");
    const cli = startCli([
      "exec", ...storeFlags(fixture), "--resource", "cli:forward", "--ttl", "2s", "--",
      "sh", "-c", `trap 'echo got-TERM > ${marker}; exit 3' TERM; echo ready > ${marker}; while :; do sleep 0.05; done`,
    ]);
    await readWhenPresent(marker, (t) => t === "ready\n");
    cli.child.kill("SIGTERM");
    const run = await cli.exited;
    expect(run.code).toBe(3);
    expect(await readFile(marker, "utf8")).toBe("got-TERM\n");
    expect(await fixture.store.get("cli:forward")).toBeNull();
  });

  it("stops waiting on SIGINT with status 130", async () => {
    const held = await fixture.store.acquire({ resource: "cli:interrupted", owner: "other", task: "t", ttlMs: 30_000 });
    expect(held.acquired).toBe(true);
    const cli = startCli(["exec", ...storeFlags(fixture), "--resource", "cli:interrupted", "--ttl", "2s", "--wait", "30s", "-v", "--", "true"]);
    // The first contended attempt is recorded before the wait: then it is waiting.
    for (let i = 0; i < 400; i++) {
      const contended = await fixture.store.events({ resource: "cli:interrupted", kinds: ["contended"] });
      if (contended.items.length > 0) break;
      await sleep(25);
    }
    cli.child.kill("SIGINT");
    const run = await cli.exited;
    expect(run.code).toBe(128 + 2);
  });

  it("exits 127 for a command that does not exist", async () => {
    const run = await runCli(["exec", ...storeFlags(fixture), "--resource", "cli:missing", "--ttl", "2s", "--", "no-such-command-lw"]);
    expect(run.code).toBe(EXIT.NOT_FOUND);
    expect(run.stderr).toContain("cannot run no-such-command-lw: command not found");
    expect(await fixture.store.get("cli:missing")).toBeNull();
  });
});

describe("leasewatch exec: usage", () => {
  const base = ["--store", "redis://127.0.0.1:6379", "--resource", "cli:usage", "--ttl", "2s"];
  it.each([
    { args: ["--store", "redis://127.0.0.1:6379", "--ttl", "2s", "--", "true"], says: "--resource is required" },
    { args: ["--store", "redis://127.0.0.1:6379", "--resource", "r", "--", "true"], says: "--ttl is required" },
    { args: [...base.slice(0, -1), "50ms", "--", "true"], says: "--ttl: ttlMs must be" },
    { args: [...base, "--wait", "soon", "--", "true"], says: '--wait: "soon" is not a duration' },
    { args: [...base, "--kill-grace", "2h", "--", "true"], says: "--kill-grace must be at most 1h" },
    { args: [...base], says: "no command" },
    { args: [...base, "true"], says: 'put the command after "--"' },
    { args: [...base, "--frobnicate", "--", "true"], says: "unknown option '--frobnicate'" },
    { args: ["--store", "redis://h:6379", "--resource", "", "--ttl", "2s", "--", "true"], says: "--resource:" },
    { args: [...base, "--owner", "a\u0007b", "--", "true"], says: "--owner: owner must be printable text" },
  ])("refuses: $says", ({ args, says }) => {
    expect(() => parseExecArgs(args)).toThrow(UsageError);
    expect(() => parseExecArgs(args)).toThrow(says);
  });

  it("reads durations, and defaults the task to the command line, one line, cut to 256 bytes", () => {
    const { plan } = parseExecArgs([...base.slice(0, -1), "1.5s", "--wait", "2m", "--", "sh", "-c", "echo a\necho b"]);
    expect(parseExecArgs([...base, "--", "true"]).plan.waitMs).toBe(86_400_000);
    expect(parseExecArgs([...base, "--wait", "0", "--", "true"]).plan.waitMs).toBe(0);
    expect(plan).toMatchObject({ ttlMs: 1_500, waitMs: 120_000, killGraceMs: 5_000, task: "sh -c echo a echo b", command: "sh", args: ["-c", "echo a\necho b"] });
    const long = taskFromCommand(["x", "é".repeat(300)]);
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(256);
    expect(long.endsWith("é...")).toBe(true);
  });

  it.each([
    { store: "mysql://h/db", says: '"mysql://" is not a store' },
    { store: "redis://127.0.0.1:6379", schema: "s", says: "--schema applies to a postgres:// store only" },
    { store: undefined, says: "--store is required (or set LEASEWATCH_STORE)" },
  ])("refuses the store $store", async ({ store, schema, says }) => {
    await expect(resolveStoreSpec({ store, schema }, {})).rejects.toThrow(says);
  });

  it("exits 2 with one line and no stack trace (the real command)", async () => {
    const run = await runCli(["exec", "--store", "redis://127.0.0.1:6379", "--resource", "r", "--ttl", "10", "--", "true"]);
    expect(run.code).toBe(EXIT.USAGE);
    expect(run.stderr.trim()).toBe('leasewatch exec: --ttl: "10" is not a duration such as 500ms, 10s, 2m or 1h');
  });

  it("exits 69 when the store cannot be reached, the store taken from LEASEWATCH_STORE", async () => {
    const run = await runCli(["exec", "--resource", "cli:down", "--ttl", "2s", "--", "true"], { env: { LEASEWATCH_STORE: "redis://127.0.0.1:1" } });
    expect(run.code).toBe(EXIT.STORE_UNAVAILABLE);
    expect(run.stderr).toContain("leasewatch: store redis:");
  });
});
