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
};

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((a) => !a.startsWith("-"));
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
