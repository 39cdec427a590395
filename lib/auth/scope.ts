/**
 * Which resources a signed-in user may see or act on. A role map entry such as
 * `team-billing:operator:tenant_1:*` grants its role only for resources whose
 * name starts with `tenant_1:`; an entry without a scope grants it everywhere.
 *
 * Framework-free on purpose: read models, actions and tests all use it.
 */

/** Everything, or only resources starting with one of `prefixes` (none: nothing at all). */
export type ViewerScope = { readonly kind: "all" } | { readonly kind: "prefixes"; readonly prefixes: readonly string[] };

export const SCOPE_ALL: ViewerScope = { kind: "all" };
export const SCOPE_NONE: ViewerScope = { kind: "prefixes", prefixes: [] };

/**
 * A scope with no redundant prefixes (one that another covers is dropped), sorted:
 * the prefixes left are disjoint, so counts read per prefix can simply be added.
 */
export function scopeOf(prefixes: readonly string[]): ViewerScope {
  const sorted = [...new Set(prefixes)].sort();
  const kept: string[] = [];
  for (const p of sorted) if (!kept.some((k) => p.startsWith(k))) kept.push(p);
  return { kind: "prefixes", prefixes: kept };
}

/** Union of scopes: an unscoped grant wins. */
export function unionScopes(scopes: readonly ViewerScope[]): ViewerScope {
  if (scopes.some((s) => s.kind === "all")) return SCOPE_ALL;
  return scopeOf(scopes.flatMap((s) => (s.kind === "prefixes" ? s.prefixes : [])));
}

export function isScoped(scope: ViewerScope): scope is Extract<ViewerScope, { kind: "prefixes" }> {
  return scope.kind === "prefixes";
}

export function isResourceInScope(scope: ViewerScope, resource: string): boolean {
  return scope.kind === "all" || scope.prefixes.some((p) => resource.startsWith(p));
}

/**
 * The prefixes that reach outside the scope. A prefix lies within the scope when it
 * starts with one of the scope's prefixes: `tenant_1:billing:` is within `tenant_1:`,
 * while `tenant_` or `` would match other tenants too. Used for API tokens, whose
 * prefixes are scopes of their own.
 */
export function prefixesOutsideScope(scope: ViewerScope, prefixes: readonly string[]): string[] {
  return prefixes.filter((p) => !isResourceInScope(scope, p));
}

/**
 * The prefixes to read for a requested prefix (or none requested) under a scope:
 * `undefined` means "read without a prefix filter" (unscoped, nothing requested);
 * otherwise every resource read must start with one of the returned prefixes. An
 * empty list means nothing in the scope can match.
 *
 *   scope tenant_1:  requested tenant_1:billing  → [tenant_1:billing]   (narrower: as asked)
 *   scope tenant_1:  requested tenant_          → [tenant_1:]          (broader: cut to the scope)
 *   scope tenant_1:  requested tenant_2:        → []                   (outside: nothing)
 */
export function readPrefixes(scope: ViewerScope, requested: string | undefined): string[] | undefined {
  if (scope.kind === "all") return requested === undefined ? undefined : [requested];
  if (requested === undefined) return [...scope.prefixes];
  if (scope.prefixes.some((p) => requested.startsWith(p))) return [requested];
  return scope.prefixes.filter((p) => p.startsWith(requested));
}

/**
 * Why bulk release under `prefix` is not offered to an operator with `scope`, or null when
 * every resource under the prefix is inside the scope. Candidates are read within the scope,
 * so a prefix outside it (or broader than it) would otherwise read as "nothing overdue".
 */
export function bulkReleaseScopeNote(scope: ViewerScope, prefix: string): string | null {
  if (isResourceInScope(scope, prefix)) return null;
  const isBroader = scope.kind === "prefixes" && scope.prefixes.some((p) => p.startsWith(prefix));
  return `Bulk release is limited to your scope (${describeScope(scope)}); ${prefix} ${isBroader ? "reaches beyond" : "is outside"} it.`;
}

/** For display: "everything" or "tenant_1:*, tenant_2:*". */
export function describeScope(scope: ViewerScope): string {
  if (scope.kind === "all") return "everything";
  if (scope.prefixes.length === 0) return "nothing";
  return scope.prefixes.map((p) => `${p}*`).join(", ");
}
