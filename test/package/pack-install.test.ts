import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPgSchema, freshRedisNamespace, TEST_DATABASE_URL, TEST_REDIS_URL } from "@leasewatch/lease/testing";

/**
 * What a user gets: the package is packed as `npm publish` would pack it, installed from
 * the tarball into empty folders outside this repository (so nothing resolves from the
 * repository's node_modules), and used by plain Node programs, ESM and CommonJS.
 */
const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const PACKAGE_DIR = path.join(ROOT, "packages/lease");
// Packing builds the package; on a loaded 2-core machine that takes minutes.
const SETUP_TIMEOUT_MS = 15 * 60_000;
const PROGRAM_TIMEOUT_MS = 120_000;

interface PackedFile {
  path: string;
}

let workDir: string;
let tarball: string;
let packedFiles: string[];

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

async function versionInRepo(name: string): Promise<string> {
  const root = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  const version = root.dependencies[name];
  if (!version) throw new Error(`${name} is not a dependency of the repository`);
  return version;
}

/** An empty project folder with the tarball and `deps` installed from the registry. */
async function installInto(name: string, deps: string[]): Promise<string> {
  const dir = path.join(workDir, name);
  await mkdir(dir);
  await writeFile(path.join(dir, "package.json"), JSON.stringify({ name: `pack-check-${name}`, private: true }));
  await npm(["install", tarball, ...deps], dir);
  return dir;
}

/** Runs `source` as `file` in `dir` with only the environment it needs; returns its JSON output. */
async function runProgram(dir: string, file: string, source: string, env: Record<string, string>): Promise<Record<string, unknown>> {
  await writeFile(path.join(dir, file), source);
  const { stdout } = await run(process.execPath, [file], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", NODE_ENV: "production", ...env },
    timeout: PROGRAM_TIMEOUT_MS,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
}

/**
 * Takes a lease, makes a fenced write, releases; takes it again and writes with the new token;
 * then writes with the first token, which the fenced table refuses. Same body in both formats.
 */
function leaseRoundProgram(format: "esm" | "cjs"): string {
  const header =
    format === "esm"
      ? `import * as lease from "@leasewatch/lease";\nimport pg from "pg";\n`
      : `const lease = require("@leasewatch/lease");\nconst pg = require("pg");\n`;
  return `${header}
const { LeaseClient, PostgresLeaseStore, RedisLeaseStore, LeaseError, createFencedTable, fencedWrite, readFencedHistory } = lease;
const env = process.env;
async function main() {
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL });
  const store =
    env.STORE_KIND === "redis"
      ? new RedisLeaseStore({ name: "pack-redis", url: env.REDIS_URL, namespace: env.NAMESPACE })
      : new PostgresLeaseStore({ name: "pack-pg", connectionString: env.DATABASE_URL, schema: env.SCHEMA });
  try {
    if (env.STORE_KIND === "postgres") await store.migrate();
    await pool.query(\`CREATE SCHEMA IF NOT EXISTS \${env.SCHEMA}\`);
    const table = \`\${env.SCHEMA}.ledger\`;
    await createFencedTable({ pool, table, history: true });
    const client = new LeaseClient(store, { owner: "pack-check-${format}" });
    const write = (fencingToken, value) =>
      fencedWrite({ pool, table, history: true, key: "total", value, fencingToken, resource: env.RESOURCE, store, by: "pack-check" });
    const hold = (task, value) =>
      client.withLease(env.RESOURCE, async ({ fencingToken }) => ({ token: String(fencingToken), write: await write(fencingToken, value) }), {
        task,
        ttlMs: 10000,
        waitMs: 5000,
      });
    const first = await hold("first", { n: 1 });
    const second = await hold("second", { n: 2 });
    const stale = await write(first.token, { n: 3 });
    const history = await readFencedHistory({ pool, table, store });
    const events = await store.events({ resource: env.RESOURCE });
    console.log(JSON.stringify({
      format: "${format}",
      tokens: [first.token, second.token],
      accepted: [first.write.accepted, second.write.accepted, stale.accepted],
      written: history.map((h) => h.value),
      heldAfter: (await store.get(env.RESOURCE)) !== null,
      kinds: events.items.map((e) => e.kind).sort(),
      typedErrors: new LeaseError("x") instanceof Error,
    }));
  } finally {
    await store.close();
    await pool.end();
  }
}
main().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;
}

/** In a folder without `pg`: a Redis lease works, and a Postgres store says what to install. */
function redisOnlyProgram(format: "esm" | "cjs"): string {
  const header = format === "esm" ? `import * as lease from "@leasewatch/lease";\n` : `const lease = require("@leasewatch/lease");\n`;
  return `${header}
const { LeaseClient, PostgresLeaseStore, RedisLeaseStore } = lease;
const env = process.env;
async function main() {
  const store = new RedisLeaseStore({ name: "pack-redis", url: env.REDIS_URL, namespace: env.NAMESPACE });
  try {
    const client = new LeaseClient(store, { owner: "redis-only-${format}" });
    const token = await client.withLease(env.RESOURCE, async ({ fencingToken }) => String(fencingToken), { task: "t", ttlMs: 10000 });
    let postgres;
    try {
      new PostgresLeaseStore({ name: "pg", connectionString: "postgres://127.0.0.1/none" });
      postgres = "created";
    } catch (error) {
      postgres = { code: error.code, message: error.message };
    }
    console.log(JSON.stringify({ token, heldAfter: (await store.get(env.RESOURCE)) !== null, postgres }));
  } finally {
    await store.close();
  }
}
main().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;
}

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), "leasewatch-pack-"));
  // The build prepack would run, first, so that `npm pack --json` prints only the JSON.
  await npm(["run", "build"], PACKAGE_DIR);
  const packed = JSON.parse(await npm(["pack", "--json", "--ignore-scripts", "--pack-destination", workDir], PACKAGE_DIR)) as { filename: string; files: PackedFile[] }[];
  tarball = path.join(workDir, packed[0]!.filename);
  packedFiles = packed[0]!.files.map((f) => f.path).sort();
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe("the packed @leasewatch/lease", () => {
  it("holds only what a user needs: the build, the command, README, LICENSE and package.json", () => {
    const unexpected = packedFiles.filter((f) => !/^(dist\/.+\.(js|cjs|d\.ts|d\.cts)|bin\/leasewatch\.js|README\.md|LICENSE|package\.json)$/.test(f));
    expect(unexpected).toEqual([]);
    for (const needed of ["dist/index.js", "dist/index.cjs", "dist/index.d.ts", "dist/index.d.cts", "dist/cli.js", "bin/leasewatch.js", "dist/testing/index.js", "LICENSE", "README.md"]) {
      expect(packedFiles).toContain(needed);
    }
  });

  describe("installed with ioredis and pg", () => {
    let dir: string;
    beforeAll(async () => {
      dir = await installInto("full", [`ioredis@${await versionInRepo("ioredis")}`, `pg@${await versionInRepo("pg")}`]);
    }, SETUP_TIMEOUT_MS);

    for (const format of ["esm", "cjs"] as const) {
      for (const kind of ["redis", "postgres"] as const) {
        it(`${format.toUpperCase()}: a program takes, fences and releases a lease on ${kind}`, async () => {
          const schema = freshPgSchema();
          const redis = freshRedisNamespace();
          try {
            const out = await runProgram(dir, `lease-round-${kind}.${format === "esm" ? "mjs" : "cjs"}`, leaseRoundProgram(format), {
              STORE_KIND: kind,
              DATABASE_URL: TEST_DATABASE_URL,
              REDIS_URL: TEST_REDIS_URL,
              SCHEMA: schema.schema,
              NAMESPACE: redis.namespace,
              RESOURCE: `pack:${format}:${kind}`,
            });
            const [first, second] = (out.tokens as string[]).map(BigInt);
            expect(second! > first!).toBe(true);
            // The stale write with the first token is refused; the table keeps the second holder's value.
            expect(out.accepted).toEqual([true, true, false]);
            expect(out.written).toEqual([{ n: 1 }, { n: 2 }]);
            expect(out.heldAfter).toBe(false);
            expect(out.kinds).toEqual(["acquired", "acquired", "fencing_rejected", "released", "released"]);
            expect(out.typedErrors).toBe(true);
          } finally {
            await schema.drop();
            await redis.drop();
          }
        });
      }
    }
  });

  describe("installed with ioredis only", () => {
    let dir: string;
    beforeAll(async () => {
      dir = await installInto("redis-only", [`ioredis@${await versionInRepo("ioredis")}`]);
    }, SETUP_TIMEOUT_MS);

    it("runs the leasewatch command", async () => {
      const { stdout } = await run(path.join(dir, "node_modules/.bin/leasewatch"), ["--help"], { cwd: dir });
      expect(stdout).toMatch(/^Usage: leasewatch/);
    });

    it("has no pg to load", async () => {
      await expect(run(process.execPath, ["-e", 'require.resolve("pg")'], { cwd: dir })).rejects.toThrow(/Cannot find module 'pg'/);
    });

    for (const format of ["esm", "cjs"] as const) {
      it(`${format.toUpperCase()}: a program takes and releases a Redis lease, and a Postgres store names the missing package`, async () => {
        const redis = freshRedisNamespace();
        try {
          const out = await runProgram(dir, `redis-only.${format === "esm" ? "mjs" : "cjs"}`, redisOnlyProgram(format), {
            REDIS_URL: TEST_REDIS_URL,
            NAMESPACE: redis.namespace,
            RESOURCE: `pack:redis-only:${format}`,
          });
          expect(out.token).toMatch(/^[0-9]+$/);
          expect(out.heldAfter).toBe(false);
          expect(out.postgres).toEqual({ code: "missing_peer_dependency", message: 'a Postgres lease store needs the "pg" package: npm install pg' });
        } finally {
          await redis.drop();
        }
      });
    }
  });
});
