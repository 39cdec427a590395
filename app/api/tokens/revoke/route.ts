import { revokeTokenFromRequest } from "@/lib/console/tokens/change-tokens";
import { mutationHandler, postOnlyHandler } from "@/lib/console/shared/mutation-route";

export const dynamic = "force-dynamic";

/** Revokes a token (body: id). 401 without a session; otherwise a typed result. */
export const POST = mutationHandler(revokeTokenFromRequest);

export const GET = postOnlyHandler("use POST with { id } to revoke a token");
