import { identityLabel } from "@/lib/auth/identity";

/**
 * A person in a record: the label (the email the IdP verified, else their subject at
 * the IdP) with the stable id they are recorded by under it, and on hover. Entries
 * written before stable ids carry an email as the id and show just that.
 */
export function ActorName({ id, email, roles }: { id: string; email: string | null; roles?: string[] }) {
  const label = identityLabel({ id, email });
  const title = roles ? `${id} · roles: ${roles.join(", ") || "none"}` : id;
  return (
    <span className="block truncate" title={title}>
      {label}
      {label !== id ? <span className="block truncate text-[11px] text-zinc-600 dark:text-zinc-400">{id}</span> : null}
    </span>
  );
}
