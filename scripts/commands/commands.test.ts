import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresLeaseStore } from "@leasewatch/lease";
import { REPO_ROOT, runCli, startCli } from "@/test/support/cli-process";
import { freshPgSchema, type FreshPgSchema, sleep, TEST_DATABASE_URL } from "@leasewatch/lease/testing";
import { TEST_AUDIT_KEY } from "@/test/support/audit";

/**
 * The console's commands through the `leasewatch` command: found from the installation's
 * package.json (the working directory, or LEASEWATCH_CONSOLE), each test on schemas of its own.
 */
describe("leasewatch console commands", () => {
  let leases: FreshPgSchema;
  let audit: FreshPgSchema;
  let consoleDb: FreshPgSchema;
  let outside: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    [leases, audit, consoleDb] = [freshPgSchema(), freshPgSchema(), freshPgSchema()];
    outside = await mkdtemp(path.join(tmpdir(), "lw-console-cli-"));
    env = {
      LEASEWATCH_STORES: JSON.stringify([{ name: "pg-cli", kind: "postgres", url: TEST_DATABASE_URL, schema: leases.schema }]),
      LEASEWATCH_AUDIT_URL: TEST_DATABASE_URL,
      LEASEWATCH_AUDIT_SCHEMA: audit.schema,
      LEASEWATCH_AUDIT_KEY: TEST_AUDIT_KEY,
      LEASEWATCH_CONSOLE_SCHEMA: consoleDb.schema,
    };
  });
  afterAll(async () => {
    await Promise.all([leases, audit, consoleDb].map((s) => s?.drop()));
    if (outside) await rm(outside, { recursive: true, force: true });
  });

  it("migrate without --store migrates the configured stores and the audit log; token and audit verify work on them", async () => {
    const pending = await runCli(["migrate", "--status"], { env });
    expect(pending.code, pending.stderr).toBe(1);
    expect(pending.stdout).toMatch(new RegExp(`^pg-cli \\(schema ${leases.schema}\\): version 0, pending 1 \\(`, "m"));
    expect(pending.stdout).toMatch(new RegExp(`^audit log \\(schema ${audit.schema}\\): version 0, pending 1 \\(`, "m"));

    const migrated = await runCli(["migrate"], { env });
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toMatch(/^pg-cli: schema at version \d+/);
    expect(migrated.stdout).toContain(`audit log (${audit.schema}): schema at version`);
    expect(migrated.stdout).toContain(`force_release() registered for ${leases.schema}`);

    const created = await runCli(["token", "create", "--name", "cli-test", "--prefix", "tenant_1:"], { env });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout.trim()).toMatch(/^\S{20,}$/); // the token, alone on stdout
    // The lease store and audit log are migrated now, and the token table since its first use.
    const migrationStatus = await runCli(["migrate", "--status"], { env });
    expect(migrationStatus.stdout).toMatch(new RegExp(`^pg-cli \\(schema ${leases.schema}\\): version \\d+, up to date$`, "m"));
    expect(migrationStatus.stdout).toMatch(/^audit log \(schema \S+\): version \d+, up to date$/m);
    expect(migrationStatus.stdout).toMatch(/^API tokens \(schema \S+\): version \d+, up to date$/m);
    expect(migrationStatus.stdout).toMatch(/^console sessions \(schema \S+\): version \d+/m);
    const listed = await runCli(["token", "list"], { env });
    expect(listed.stdout).toMatch(/^cli-test\tlive\ttenant_1:\tpg-cli\t/);
    const revoked = await runCli(["token", "revoke", "--name", "cli-test"], { env });
    expect(revoked).toMatchObject({ code: 0, stdout: 'revoked "cli-test"\n' });

    const verified = await runCli(["audit", "verify"], { env });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toContain(`audit chain intact: 2 entries in ${audit.schema}.audit_log`);

    // A configured store by name, for the library's commands too.
    const status = await runCli(["status", "--store", "pg-cli", "cli:named"], { env });
    expect(status).toMatchObject({ code: 0, stdout: "cli:named: free\n" });
  });

  it("outside the installation they say where they run (exit 2); LEASEWATCH_CONSOLE points at it from anywhere", async () => {
    const lost = await runCli(["audit", "verify"], { env, cwd: outside });
    expect(lost.code).toBe(2);
    expect(lost.stderr).toContain("this is the console's command and no console installation found from here");
    expect(lost.stderr).toContain("LEASEWATCH_CONSOLE=<that directory>");
    const named = await runCli(["status", "--store", "pg-cli", "cli:named"], { env, cwd: outside });
    expect(named.code).toBe(2);
    expect(named.stderr).toContain("give a redis:// or postgres:// URL");

    const pointed = await runCli(["audit", "verify"], { env: { ...env, LEASEWATCH_CONSOLE: REPO_ROOT }, cwd: outside });
    expect(pointed.code, pointed.stderr).toBe(0);
    expect(pointed.stdout).toContain("audit chain intact");
  });

  it("sweep without --store runs the console's sweeper over the configured stores until SIGTERM", async () => {
    const store = new PostgresLeaseStore({ name: "pg-cli", connectionString: TEST_DATABASE_URL, schema: leases.schema });
    try {
      await store.migrate();
      const lapsed = await store.acquire({ resource: "cli:console-sweep", owner: "crashed", task: "t", ttlMs: 100 });
      expect(lapsed.acquired).toBe(true);
      await sleep(300);
      const cli = startCli(["sweep", "--every", "200ms"], { env: { ...env, LEASEWATCH_SWEEPER_PORT: "0" } });
      const deadline = Date.now() + 30_000;
      while (!cli.stdout().includes("recorded 1 expiries") && Date.now() < deadline) await sleep(100);
      cli.child.kill("SIGTERM");
      const run = await cli.exited;
      expect(run.code, run.stderr).toBe(0);
      // The sweeper's own log: JSON lines naming the stores it sweeps.
      expect(run.stdout).toContain('"stores":["pg-cli"],"intervalMs":200');
      expect((await store.events({ resource: "cli:console-sweep", kinds: ["expired"] })).items).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it("token refuses bad usage with status 2", async () => {
    const run = await runCli(["token", "revoke"], { env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("revoke needs --name");
  });
});
