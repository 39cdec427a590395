/**
 * `npm run bench [-- part…]`: runs the named benchmark parts (default: all), each
 * a module exporting `run(): Promise<BenchOutcome>`. Parts register below.
 * Loopback only; every part isolates its data and cleans up after itself.
 */
export interface BenchOutcome {
  /** Whether every target this part checks was met. */
  isMet: boolean;
}

const PARTS: Record<string, () => Promise<{ run: () => Promise<BenchOutcome> }>> = {
  lease: () => import("./lease-bench"),
  console: () => import("./console-bench"),
  api: () => import("./api-bench"),
  memory: () => import("./console-memory-bench"),
  "redis-filters": () => import("./redis-filters-bench"),
};

/**
 * `npm run bench -- console --scale 10 --reuse <suffix>`: see bench/console-scale-bench.ts;
 * `npm run bench -- redis-filters --events N --keep`: see bench/redis-filters-bench.ts.
 */
const FLAGS_WITH_VALUES = ["--scale", "--reuse", "--suffix", "--stores", "--seed-budget-min", "--events"];

async function main(): Promise<void> {
  // Parts are the bare words; flags and the values of flags that take one (`--scale 10`) are not.
  const argv = process.argv.slice(2);
  const args = argv.filter((a, i) => !a.startsWith("-") && !FLAGS_WITH_VALUES.includes(argv[i - 1] ?? ""));
  const unknown = args.filter((a) => !(a in PARTS));
  if (unknown.length > 0) {
    console.error(`unknown bench part(s): ${unknown.join(", ")}; known: ${Object.keys(PARTS).join(", ")}`);
    process.exit(2);
  }
  const selected = args.length > 0 ? args : Object.keys(PARTS);
  let isAllMet = true;
  for (const name of selected) {
    console.log(`\n=== bench: ${name} ===`);
    const part = await PARTS[name]!();
    const outcome = await part.run();
    isAllMet &&= outcome.isMet;
  }
  console.log(`\n${isAllMet ? "all targets met" : "some targets missed (see MISS above)"}`);
  // Targets are reported, not enforced, unless asked: numbers vary with the machine.
  if (!isAllMet && process.argv.includes("--strict")) process.exit(1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
