import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoreFixture } from "@/test/support/stores";
import { setUpStoreFixture } from "@/test/support/store-suite";
import { PostgresLeaseStore } from "../postgres/store";
import { runCli, startCli } from "@/test/support/cli-process";
import { freshPgSchema, sleep, TEST_DATABASE_URL } from "../testing/isolation";
import { EXIT } from "./usage";

function storeFlags(fixture: StoreFixture): string[] {
  const { spec } = fixture;
  return spec.kind === "postgres" ? ["--store", spec.url, "--schema", spec.schema] : ["--store", spec.url, "--namespace", spec.namespace];
}

describe("leasewatch --help", () => {
  let outside: string;
  beforeAll(async () => {
    outside = await mkdtemp(path.join(tmpdir(), "lw-help-"));
  });
  afterAll(async () => {
    await rm(outside, { recursive: true, force: true });
  });

  it("explains every command, inside the console's installation and outside it", async () => {
    const commands = [["exec"], ["status"], ["migrate"], ["sweep"], ["audit", "verify"], ["token", "create"], ["token", "revoke"], ["token", "list"]];
    const runs = await Promise.all(commands.map((command) => runCli([...command, "--help"], { cwd: outside })));
    runs.forEach((run, i) => {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^Usage: leasewatch ${commands[i]![0]}`));
    });
    const [main, group, consoleToken] = await Promise.all([runCli(["--help"]), runCli(["token", "--help"]), runCli(["token", "create", "--help"])]);
    expect(main.stdout).toContain("exec           hold a lease while a command runs");
    expect(group.stdout).toContain("revoke   revoke one by name");
    // Inside the installation the console's own usage, with its options.
    expect(consoleToken.stdout).toContain("[--action ACTION …] [--days 90]");
  });

  it("exits 2 without a command or with an unknown one", async () => {
    const [none, unknown] = await Promise.all([runCli([]), runCli(["frobnicate"])]);
    expect(none.code).toBe(EXIT.USAGE);
    expect(none.stderr).toContain("Usage: leasewatch <command>");
    expect(unknown).toMatchObject({ code: EXIT.USAGE, stderr: 'leasewatch frobnicate: unknown command "frobnicate"; see leasewatch --help\n' });
  });
});

describe("the console's commands module", () => {
  let installation: string;
  beforeAll(async () => {
    installation = await mkdtemp(path.join(tmpdir(), "lw-installation-"));
    // A console installation as the command sees it: a package.json naming a module (here CommonJS, as the build makes it).
    await writeFile(path.join(installation, "package.json"), JSON.stringify({ name: "some-console", leasewatch: { consoleCommands: ["./missing.js", "./commands.cjs"] } }));
    await writeFile(
      path.join(installation, "commands.cjs"),
      `exports.commands = { "audit verify": { usage: "Usage: leasewatch audit verify (stand-in)", run: async (args) => { console.log("verified " + JSON.stringify(args)); return 3; } } };`,
    );
  });
  afterAll(async () => {
    if (installation) await rm(installation, { recursive: true, force: true });
  });

  it("is found from the working directory or LEASEWATCH_CONSOLE, gets the arguments and gives the exit status", async () => {
    const [fromCwd, fromEnv, help] = await Promise.all([
      runCli(["audit", "verify", "--deep"], { cwd: path.join(installation) }),
      runCli(["audit", "verify"], { env: { LEASEWATCH_CONSOLE: installation }, cwd: tmpdir() }),
      runCli(["audit", "verify", "--help"], { cwd: installation }),
    ]);
    expect(fromCwd).toMatchObject({ code: 3, stdout: 'verified ["--deep"]\n' });
    expect(fromEnv).toMatchObject({ code: 3, stdout: "verified []\n" });
    expect(help).toMatchObject({ code: 0, stdout: "Usage: leasewatch audit verify (stand-in)\n" });
  });

  it("says what is missing: a command the module lacks, or a LEASEWATCH_CONSOLE without the field", async () => {
    const [lacking, wrongDir] = await Promise.all([
      runCli(["token", "list"], { cwd: installation }),
      runCli(["audit", "verify"], { env: { LEASEWATCH_CONSOLE: tmpdir() }, cwd: installation }),
    ]);
    expect(lacking.code).toBe(EXIT.USAGE);
    expect(lacking.stderr).toContain(`the console in ${installation} has no "token list" command`);
    expect(wrongDir.code).toBe(EXIT.USAGE);
    expect(wrongDir.stderr).toContain(`LEASEWATCH_CONSOLE=${tmpdir()}`);
  });
});

describe.each(["redis", "postgres"] as const)("leasewatch status and sweep on %s", (kind) => {
  const fixture = setUpStoreFixture(kind);

  it("shows who holds a resource, its token and expiry; free when nobody does; --json for scripts", async () => {
    const held = await fixture.store.acquire({ resource: "cli:status", owner: "host-a:17", task: "nightly-report", ttlMs: 60_000 });
    if (!held.acquired) throw new Error("not acquired");
    const [text, json, free] = await Promise.all([
      runCli(["status", ...storeFlags(fixture), "cli:status"]),
      runCli(["status", ...storeFlags(fixture), "--json", "cli:status"]),
      runCli(["status", ...storeFlags(fixture), "cli:nobody"]),
    ]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain("cli:status: held");
    expect(text.stdout).toMatch(/owner +host-a:17\n/);
    expect(text.stdout).toMatch(/task +nightly-report\n/);
    expect(text.stdout).toContain(`fencing token  ${held.lease.fencingToken}\n`);
    expect(text.stdout).toMatch(/expires +in \d+ s \(/);
    const parsed = JSON.parse(json.stdout) as { held: boolean; lease: { fencingToken: string; leaseId: string }; expiresInMs: number };
    expect(parsed).toMatchObject({ held: true, lease: { fencingToken: held.lease.fencingToken, leaseId: held.lease.leaseId } });
    expect(parsed.expiresInMs).toBeGreaterThan(0);
    expect(free).toMatchObject({ code: 0, stdout: "cli:nobody: free\n" });
  });

  it("sweep --once records the expiry of a lease that lapsed", async () => {
    const lapsed = await fixture.store.acquire({ resource: "cli:lapsed", owner: "crashed", task: "t", ttlMs: 100 });
    expect(lapsed.acquired).toBe(true);
    await sleep(300);
    const run = await runCli(["sweep", ...storeFlags(fixture), "--once"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("recorded 1 expiry");
    const expired = await fixture.store.events({ resource: "cli:lapsed", kinds: ["expired"] });
    expect(expired.items).toHaveLength(1);
  });

  it("sweep keeps sweeping every --every until SIGTERM, then exits 0", async () => {
    const cli = startCli(["sweep", ...storeFlags(fixture), "--every", "200ms"]);
    const deadline = Date.now() + 20_000;
    while (!cli.stdout().includes("sweeping") && Date.now() < deadline) await sleep(50);
    const lapsed = await fixture.store.acquire({ resource: "cli:lapsed-later", owner: "crashed", task: "t", ttlMs: 100 });
    expect(lapsed.acquired).toBe(true);
    while (!cli.stdout().includes("recorded 1 expiry") && Date.now() < deadline) await sleep(50);
    cli.child.kill("SIGTERM");
    const run = await cli.exited;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("recorded 1 expiry");
    expect(run.stdout).toContain("stopped sweeping");
    expect((await fixture.store.events({ resource: "cli:lapsed-later", kinds: ["expired"] })).items).toHaveLength(1);
  });
});

describe("leasewatch migrate --store", () => {
  it("creates a Postgres store's schema (again: up to date); before that, other commands say to run it", async () => {
    const fresh = freshPgSchema(TEST_DATABASE_URL);
    const flags = ["--store", TEST_DATABASE_URL, "--schema", fresh.schema];
    try {
      const before = await runCli(["status", ...flags, "cli:r"]);
      expect(before.code).toBe(EXIT.STORE_UNAVAILABLE);
      expect(before.stderr).toContain("run `leasewatch migrate --store …` once");

      const pending = await runCli(["migrate", ...flags, "--status"]);
      expect(pending.code, pending.stderr).toBe(EXIT.FAILURE);
      expect(pending.stdout).toMatch(new RegExp(`^postgres: schema ${fresh.schema} at version 0, pending 1 \\([^)]+\\), 2 \\(`));

      const first = await runCli(["migrate", ...flags]);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(new RegExp(`^postgres: schema ${fresh.schema} at version \\d+ \\(applied 1, `));
      const again = await runCli(["migrate", ...flags]);
      expect(again.stdout).toContain("(up to date)");
      expect(await runCli(["migrate", ...flags, "--status"])).toMatchObject({ code: 0, stdout: expect.stringMatching(/at version \d+ \(up to date\)\n$/) });

      const exec = await runCli(["exec", ...flags, "--resource", "cli:r", "--ttl", "2s", "--", "true"]);
      expect(exec.code, exec.stderr).toBe(0);
      const store = new PostgresLeaseStore({ name: "check", connectionString: TEST_DATABASE_URL, schema: fresh.schema });
      try {
        expect((await store.events({ resource: "cli:r", kinds: ["acquired", "released"] })).items).toHaveLength(2);
      } finally {
        await store.close();
      }
    } finally {
      await fresh.drop();
    }
  });

  it("has nothing to migrate on Redis, and says so once it answers", async () => {
    const run = await runCli(["migrate", "--store", "redis://127.0.0.1:6379"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("nothing to migrate on Redis");
  });
});
