import { forceReleaseFromRequest } from "@/lib/console/release/force-release";
import { mutationHandler, postOnlyHandler } from "@/lib/console/shared/mutation-route";

export const dynamic = "force-dynamic";

/**
 * Force-releases one lease (body: store, resource, leaseId, reason, confirm).
 * 401 without a session; every other answer is a typed result (see
 * lib/console/release/force-release-types.ts) with a status that says which.
 */
export const POST = mutationHandler(forceReleaseFromRequest);

export const GET = postOnlyHandler("use POST to force-release a lease");
