/** Redis's own counters that the benchmarks read: INFO cpu and INFO commandstats. */
import type { Redis } from "ioredis";

export interface CommandStat {
  calls: number;
  usec: number;
}

/** The server's CPU so far (user + system), in seconds; null when INFO does not say. */
export async function readServerCpuSeconds(admin: Redis): Promise<number | null> {
  const info = await admin.info("cpu");
  const user = /used_cpu_user:([\d.]+)/.exec(info)?.[1];
  const system = /used_cpu_sys:([\d.]+)/.exec(info)?.[1];
  return user === undefined || system === undefined ? null : Number(user) + Number(system);
}

/** Calls and µs per command so far; commands run inside scripts and functions count under their own names. */
export async function readCommandStats(admin: Redis): Promise<Map<string, CommandStat>> {
  const stats = new Map<string, CommandStat>();
  const info = await admin.info("commandstats");
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) stats.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  return stats;
}
