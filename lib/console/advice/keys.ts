export const adviceKeys = {
  all: ["advice"] as const,
  /** `search`: the page's query string (store, prefix, window, from, to). */
  view: (search: string) => ["advice", search] as const,
  slack: (search: string) => ["advice", "slack", search] as const,
};
