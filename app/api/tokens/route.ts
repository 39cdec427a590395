import { createTokenFromRequest } from "@/lib/console/tokens/change-tokens";
import { requireApiSession } from "@/lib/auth/session";
import { respondWithRead } from "@/lib/console/shared/api-response";
import { mutationHandler } from "@/lib/console/shared/mutation-route";
import { listApiTokenViews } from "@/lib/console/tokens/list-tokens";

export const dynamic = "force-dynamic";

/** The lock API's tokens this session may see (never a secret or a hash), newest first. */
export async function GET() {
  const auth = await requireApiSession();
  if (!auth.ok) return auth.response;
  return respondWithRead(auth.session, "tokens:read", async (scope) => ({ ok: true, view: { items: await listApiTokenViews(scope) } }));
}

/**
 * Creates a token (body: name, prefixes, stores, actions, expiresInDays). The
 * secret is in this answer only. 401 without a session; every other answer is a
 * typed result (lib/console/tokens/token-types.ts) with a status that says which.
 */
export const POST = mutationHandler(createTokenFromRequest);
