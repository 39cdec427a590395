export const eventKeys = {
  all: ["events"] as const,
  /** `search`: the `/events` query string (filters, window, cursor). */
  list: (search: string) => ["events", "list", search] as const,
};
