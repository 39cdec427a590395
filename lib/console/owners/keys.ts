export const ownerKeys = {
  all: ["owners"] as const,
  /** `search`: the owner page's query string (store, window). */
  detail: (owner: string, search: string) => ["owners", "detail", owner, search] as const,
};
