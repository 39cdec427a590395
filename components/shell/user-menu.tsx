import { Badge } from "@/components/ui/badge";
import { getPrimaryRole, scopeForPermission } from "@/lib/auth/roles";
import { describeScope } from "@/lib/auth/scope";
import type { AppSession } from "@/lib/auth/session";
import { SignOutButton } from "./sign-out-button";

/** Who is signed in and with which role, with a way out. */
export function UserMenu({ session }: { session: AppSession }) {
  const { user } = session;
  const role = getPrimaryRole(user.roles);
  // What this user can see at all; shown only when it is not everything.
  const scope = scopeForPermission(user, "leases:read");
  return (
    <div className="flex items-center gap-2 text-sm" aria-label="Signed-in user">
      <span className="max-w-48 truncate font-medium" title={user.email ? `${user.email} · ${user.id}` : user.id} data-testid="user-name">
        {user.name ?? user.email ?? user.id}
      </span>
      {role ? (
        <Badge tone={role === "operator" ? "violet" : "blue"}>
          <span className="sr-only">role: </span>
          <span data-testid="user-role">{role}</span>
        </Badge>
      ) : null}
      {scope.kind === "prefixes" ? (
        <span className="max-w-40 truncate font-mono text-xs text-zinc-600 dark:text-zinc-400" title={`You see only resources under ${describeScope(scope)}`}>
          <span className="sr-only">limited to </span>
          <span data-testid="user-scope">{describeScope(scope)}</span>
        </span>
      ) : null}
      <SignOutButton />
    </div>
  );
}
