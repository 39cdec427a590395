export const facetKeys = {
  all: ["facets"] as const,
  /** `view`: which list; `search`: that list's query string (its filters and window). */
  counts: (view: string, search: string) => ["facets", view, search] as const,
};
