import { mutationHandler, postOnlyHandler } from "@/lib/console/shared/mutation-route";
import { observedReleaseFromRequest } from "@/lib/console/observed/observed-release";

export const dynamic = "force-dynamic";

/**
 * Force-releases one observed lock (body: store, resource, shown, reason), only
 * while it still shows the holder shown. 401 without a session; every other
 * answer is a typed result (lib/console/observed/observed-release-types.ts).
 */
export const POST = mutationHandler(observedReleaseFromRequest);

export const GET = postOnlyHandler("use POST to force-release an observed lock");
