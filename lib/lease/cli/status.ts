import { ZResource } from "../validation";
import { resolveStoreSpec, runOnStore, STORE_OPTIONS, STORE_OPTIONS_HELP } from "./store-option";
import { EXIT, parseOptions, UsageError, type CliOutput } from "./usage";

export const STATUS_HELP = `Usage: leasewatch status --store URL [--json] RESOURCE

Shows who holds RESOURCE: owner, task, fencing token, lease id, and when the lease
expires. "expires in" compares the store's expiry with this machine's clock, so it is
as exact as the two clocks agree. A lease past its expiry that no sweep has recorded
yet is shown as lapsed: nobody holds it, the next acquire takes it over.

Options:
  --json        one JSON object: {"resource", "held", "lease": {…} | null, "expiresInMs"}
  -h, --help    this help

${STORE_OPTIONS_HELP}

Exit status: 0 whether or not it is held; 2 usage error; 69 the store could not be reached.`;

const STATUS_OPTIONS = { ...STORE_OPTIONS, json: { type: "boolean" } } as const;

function describeIn(ms: number): string {
  const seconds = Math.abs(ms) / 1_000;
  const text = seconds < 10 ? `${seconds.toFixed(1)} s` : seconds < 120 ? `${Math.round(seconds)} s` : `${Math.round(seconds / 60)} min`;
  return ms >= 0 ? `in ${text}` : `${text} ago`;
}

export async function runStatus(argv: readonly string[], output: CliOutput): Promise<number> {
  const { values, positionals } = parseOptions(argv, STATUS_OPTIONS, true);
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? "name the resource: leasewatch status --store URL RESOURCE" : "one resource at a time");
  const parsedResource = ZResource.safeParse(positionals[0]);
  if (!parsedResource.success) throw new UsageError(`RESOURCE: ${parsedResource.error.issues[0]?.message ?? "invalid"}`);
  const resource = parsedResource.data;
  const spec = await resolveStoreSpec(values);
  return runOnStore(spec, output, { showWarnings: false }, async (store) => {
    const lease = await store.get(resource);
    const expiresInMs = lease ? lease.expiresAt.getTime() - Date.now() : null;
    const isHeld = lease !== null && expiresInMs !== null && expiresInMs > 0;
    if (values.json) {
      output.out(JSON.stringify({ store: spec.name, resource, held: isHeld, lease, expiresInMs }));
      return EXIT.OK;
    }
    if (!lease || expiresInMs === null) {
      output.out(`${resource}: free`);
      return EXIT.OK;
    }
    output.out(isHeld ? `${resource}: held` : `${resource}: lapsed, not yet recorded as expired (free to take)`);
    output.out(`  owner          ${lease.owner}`);
    output.out(`  task           ${lease.task}`);
    output.out(`  fencing token  ${lease.fencingToken}`);
    output.out(`  lease id       ${lease.leaseId}`);
    output.out(`  acquired       ${lease.acquiredAt.toISOString()} (renewed ${lease.renewals} times, ttl ${lease.ttlMs} ms)`);
    output.out(`  ${isHeld ? "expires" : "expired"}        ${describeIn(expiresInMs)} (${lease.expiresAt.toISOString()})`);
    return EXIT.OK;
  });
}
