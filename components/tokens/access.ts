/** Who may change tokens here (display only; the routes re-check): `canManage`, or the reason they may not. */
export type TokenAccess = { canManage: true } | { canManage: false; reason: string };

export const PRIMARY_BUTTON =
  "rounded-md bg-zinc-900 px-3 py-1.5 text-sm font-semibold text-white hover:bg-zinc-700 disabled:cursor-not-allowed disabled:opacity-50 dark:bg-zinc-100 dark:text-zinc-900 dark:hover:bg-zinc-300";

/** `/audit` filtered to token changes, with one entry marked. */
export function tokenAuditHref(action: "token_create" | "token_revoke", auditId: string): string {
  return `/audit?${new URLSearchParams({ action, entry: auditId })}#audit-${auditId}`;
}
