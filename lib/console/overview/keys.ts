export const overviewKeys = {
  all: ["overview"] as const,
  /** `search`: the page's query string (window, from, to, depth, store). */
  view: (search: string) => ["overview", search] as const,
};
