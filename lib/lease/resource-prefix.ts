/**
 * Kept apart from validation.ts so client components can use it without pulling
 * zod into the browser: zod 4 probes `new Function` when a schema is built, which
 * the console's CSP (no 'unsafe-eval') reports as a violation.
 */

/** The first `depth` `:`-separated segments of a resource: "t_1:billing:2026-04" → "t_1:billing". */
export function resourcePrefix(resource: string, depth: number): string {
  return resource.split(":").slice(0, depth).join(":");
}
