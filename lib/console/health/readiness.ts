/**
 * Whether this console replica should get traffic (GET /readyz): it is not stopping, and its
 * own Postgres (sessions; the audit log and API tokens live there by default) answers. The
 * lease stores are not part of it: a store that is down shows as down on every page, and
 * taking the console out of rotation would hide exactly that.
 */
import { getSessionStore } from "@/lib/auth/session-state";
import { isConsoleStopping } from "./lifecycle";

export const READINESS_TIMEOUT_MS = 1_500;

/** Never throws, never takes longer than `timeoutMs`. */
export async function isConsoleReady(timeoutMs = READINESS_TIMEOUT_MS): Promise<boolean> {
  if (isConsoleStopping()) return false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    // getSessionStore throws on a configuration the pages cannot work with either.
    const check = Promise.resolve()
      .then(() => getSessionStore().health())
      .catch(() => false);
    return await Promise.race([check, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
