/**
 * Client-side fetch of a console read route. A non-2xx answer becomes an
 * ApiError carrying the route's own message ("Bad parameter …", "not signed in").
 */
export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

/** Live views poll this often while the tab is visible, unless the viewer picks another interval. */
export const LIVE_POLL_MS = 5_000;

/** `what` names the request in the fallback message when the route sends no error of its own. */
export async function fetchView<T>(path: string, signal?: AbortSignal, what = "request"): Promise<T> {
  const response = await fetch(path, { headers: { accept: "application/json" }, cache: "no-store", signal });
  if (!response.ok) {
    const body = (await response.json().catch(() => null)) as { error?: string } | null;
    throw new ApiError(response.status, body?.error ?? `${what} failed (HTTP ${response.status})`);
  }
  return (await response.json()) as T;
}

/** `"a=1&b=2"` → `"?a=1&b=2"`, `""` → `""`. */
export function withSearch(path: string, search: string): string {
  const s = search.startsWith("?") ? search.slice(1) : search;
  return s ? `${path}?${s}` : path;
}

/**
 * Shared polling options: a server-rendered first paint as `initialData` (its
 * `readAt` tells Query how fresh it is), then a refetch every `intervalMs`
 * (the viewer's refresh choice; null is off), paused while the tab is hidden.
 */
export function liveOptions<T extends { readAt: string }>(initialData: T | undefined, intervalMs: number | null = LIVE_POLL_MS) {
  return {
    initialData,
    initialDataUpdatedAt: initialData ? Date.parse(initialData.readAt) : undefined,
    refetchInterval: intervalMs ?? (false as const),
    refetchIntervalInBackground: false,
    // "Off" means off: not even a refetch when the window regains focus.
    refetchOnWindowFocus: intervalMs !== null,
  } as const;
}
