import { Badge } from "@/components/ui/badge";
import { getPrimaryRole } from "@/lib/auth/roles";
import type { AppSession } from "@/lib/auth/session";
import { SignOutButton } from "./sign-out-button";

/** Who is signed in and with which role, with a way out. */
export function UserMenu({ session }: { session: AppSession }) {
  const { user } = session;
  const role = getPrimaryRole(user.roles);
  return (
    <div className="flex items-center gap-2 text-sm" aria-label="Signed-in user">
      <span className="max-w-48 truncate font-medium" title={user.email ?? user.id} data-testid="user-name">
        {user.name ?? user.email ?? user.id}
      </span>
      {role ? (
        <Badge tone={role === "operator" ? "violet" : "blue"}>
          <span className="sr-only">role: </span>
          <span data-testid="user-role">{role}</span>
        </Badge>
      ) : null}
      <SignOutButton />
    </div>
  );
}
