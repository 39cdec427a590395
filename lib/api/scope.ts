/**
 * What a token may see. Outside its prefixes or stores everything is "not found"
 * (never "forbidden"), so a token cannot learn that another tenant's lock exists.
 * A missing action is a 403: that says something about the token, not about locks.
 */
import { ApiProblem, notFound } from "./problem";
import type { ApiAction, ApiToken } from "./tokens";

export function canSeeResource(token: Pick<ApiToken, "prefixes">, resource: string): boolean {
  return token.prefixes.some((prefix) => resource.startsWith(prefix));
}

export function requireAction(token: Pick<ApiToken, "actions" | "name">, action: ApiAction): void {
  if (!token.actions.includes(action)) throw new ApiProblem("forbidden", `Token "${token.name}" may not ${action}; ask an operator for a token with that action.`);
}

/** The store a request names, or the token's first; null when the token may not use it. */
export function chooseStore(token: Pick<ApiToken, "stores">, requested: string | undefined): string | null {
  if (requested === undefined) return token.stores[0] ?? null;
  return token.stores.includes(requested) ? requested : null;
}

/**
 * A list prefix inside the tenant: it must extend one of the token's prefixes
 * (`tenant_1:` may list `tenant_1:billing`, never `tenant_` nor ``).
 */
export function resolveListPrefix(token: Pick<ApiToken, "prefixes">, requested: string | undefined): string {
  if (requested === undefined) {
    if (token.prefixes.length === 1 && token.prefixes[0]) return token.prefixes[0];
    throw new ApiProblem("invalid-request", `This token has several prefixes; pass ?prefix= starting with one of: ${token.prefixes.join(", ")}.`);
  }
  if (!canSeeResource(token, requested)) throw notFound();
  return requested;
}
