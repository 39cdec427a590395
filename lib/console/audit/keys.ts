export const auditKeys = {
  all: ["audit"] as const,
  lists: () => ["audit", "list"] as const,
  /** `search`: the `/audit` query string (filters, cursor). */
  list: (search: string) => ["audit", "list", search] as const,
  /** Force-release history of one lease (lease page). */
  lease: (store: string, resource: string) => ["audit", "lease", store, resource] as const,
};
