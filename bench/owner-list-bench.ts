/**
 * Owner / task lease lists on one Redis namespace of many live leases: p50 / p95 of
 * `list({ owner | task, sort })` for a rare and a busy owner and task, in every sort.
 *
 *   tsx bench/owner-list-bench.ts --url redis://127.0.0.1:6411 --leases 200000 [--seed] [--namespace NS] [--lib DIR] [--rounds N]
 *
 * --seed writes the live leases as the store leaves them (scripts/seed/redis-seed.ts, with the
 * acq / names listing zsets, as an older store left them: no owner / task zsets). --lib measures
 * the store of another checkout (a directory holding lib/lease), e.g. the code before a change.
 * The store's projector builds the owner / task zsets on first use; the time that takes is shown.
 */
import { Redis } from "ioredis";
import path from "node:path";
import { makeLiveLeases, quantile } from "./console-bench";
import { writeRedisLeases } from "../scripts/seed/redis-seed";

const BUCKETS = 16;

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

async function main(): Promise<void> {
  const url = flag("--url") ?? "redis://127.0.0.1:6379";
  const count = Number(flag("--leases") ?? 200_000);
  const namespace = flag("--namespace") ?? "lwob_owner_list";
  const rounds = Number(flag("--rounds") ?? 20);
  const lib = path.resolve(flag("--lib") ?? path.join(__dirname, ".."));
  const client = new Redis(url);
  const nowMs = Number((await client.time())[0]) * 1000;
  if (process.argv.includes("--seed")) {
    // Rare owners and tasks: one lease in ~20 000 / ~25 000.
    const leases = [...makeLiveLeases(count, nowMs, 7, [3_600_000])].map((l, g) => ({
      ...l,
      owner: g % 20_011 === 5 ? "rare-owner" : l.owner,
      task: g % 25_013 === 9 ? "rare-task" : g % 4 === 0 ? "busy-task" : l.task,
    }));
    const started = performance.now();
    await writeRedisLeases({ client, namespace, buckets: BUCKETS, eventsMaxLen: 100_000, evidsMaxLen: 64 }, leases, nowMs);
    console.log(`seeded ${leases.length} live leases in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  const { RedisLeaseStore } = (await import(path.join(lib, "lib/lease/redis/store.ts"))) as typeof import("@leasewatch/lease");
  const store = new RedisLeaseStore({ name: "bench", url, namespace, buckets: BUCKETS });
  const started = performance.now();
  for (let i = 0; i < 1_000 && !(await store.project()).isCaughtUp; i++);
  console.log(`projector caught up (building the owner / task zsets if this code has them) in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const filters = [
    ["owner rare", { owner: "rare-owner" }],
    ["owner busy", { owner: "worker-3@billing-7c9f" }],
    ["task rare", { task: "rare-task" }],
    ["task busy", { task: "busy-task" }],
  ] as const;
  for (const [name, filter] of filters) {
    for (const sort of ["expires", "held_longest", "newest"] as const) {
      const times: number[] = [];
      let items = 0;
      let partial = "";
      for (let r = 0; r < rounds; r++) {
        const t = performance.now();
        const page = await store.list({ ...filter, sort, limit: 100 });
        times.push(performance.now() - t);
        items = page.items.length;
        partial = page.partial ? ` partial=${page.partial.reason}` : "";
      }
      console.log(`${name.padEnd(11)} sort=${sort.padEnd(12)} p50 ${quantile(times, 0.5).toFixed(1).padStart(7)} ms  p95 ${quantile(times, 0.95).toFixed(1).padStart(7)} ms  items ${items}${partial}`);
    }
  }
  await store.close();
  client.disconnect();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
