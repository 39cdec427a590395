/**
 * The console links in ops/alerts.yml, read the way Prometheus reads the rules file,
 * and filled in the way Prometheus fills them (labels, and the alert's start for `at=`).
 * Shared by the link parse test (lib/console/shared/alert-links.test.ts) and the browser test
 * that opens each link (e2e/alert-links.spec.ts).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";

export const RULES_TEXT = readFileSync(path.join(__dirname, "..", "..", "ops", "alerts.yml"), "utf8");
export const RULES_BASE = "https://leasewatch.example.internal";

/**
 * `at=` + the template that reads the alert's start from its ALERTS_FOR_STATE series, falling
 * back to the evaluation time. Groups: alert name, `,label=%q…` of the selector, ` $labels.x…`.
 */
export const AT_TEMPLATE =
  /at=\{\{ with printf "ALERTS_FOR_STATE\{alertname=\\"(\w+)\\"((?:,\w+=%q)*)\}"((?: \$labels\.\w+)*) \| query \}\}\{\{ \(\. \| first \| value \| toTime\)\.UTC\.Format "2006-01-02T15:04:05Z" \}\}\{\{ else \}\}\{\{ with query "time\(\)" \}\}\{\{ \(\. \| first \| value \| toTime\)\.UTC\.Format "2006-01-02T15:04:05Z" \}\}\{\{ end \}\}\{\{ end \}\}$/;

/** The rules file as Prometheus reads it. */
const ZRules = z.object({
  groups: z
    .array(
      z.object({
        name: z.string(),
        rules: z.array(z.object({ alert: z.string(), expr: z.string(), annotations: z.record(z.string(), z.string()).default({}) })),
      }),
    )
    .min(1),
});

export const ALERT_RULES = ZRules.parse(parseYaml(RULES_TEXT)).groups.flatMap((g) => g.rules);

/** Every annotation whose value is a console link, by alert. */
export const ALERT_LINKS = ALERT_RULES.flatMap((rule) =>
  Object.entries(rule.annotations)
    .filter(([, value]) => value.startsWith(RULES_BASE))
    .map(([name, link]) => ({ alert: rule.alert, name, link })),
);

/** The link as Prometheus would expand it for an alert with `labels` that became active at `at` (ISO, whole seconds, Z). */
export function fillTemplates(link: string, labels: Readonly<Record<string, string>>, at: string): string {
  return link.replace(AT_TEMPLATE, `at=${at}`).replace(/\{\{\s*\$labels\.(\w+)\s*(\|\s*urlquery\s*)?\}\}/g, (_, label: string, urlquery?: string) => {
    const value = labels[label];
    if (value === undefined) throw new Error(`no sample value for label ${label} in ${link}`);
    // Go's url.QueryEscape, which urlquery is: spaces become '+'.
    return urlquery ? encodeURIComponent(value).replace(/%20/g, "+") : value;
  });
}
