export const leaseKeys = {
  all: ["leases"] as const,
  lists: () => ["leases", "list"] as const,
  /** `search`: the `/locks` query string (filters, sort, cursor). */
  list: (search: string) => ["leases", "list", search] as const,
  detail: (store: string, resource: string) => ["leases", "detail", store, resource] as const,
};
