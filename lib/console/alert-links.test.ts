/**
 * The drill-down links in ops/alerts.yml must open a page, not a "bad parameter"
 * notice: fill in the label templates the way Prometheus would and parse each
 * link with the page's own parameter parser. The rules are parsed as YAML, so a link
 * is found wherever Prometheus would find it.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { parseEventsParams, parseLeasesParams, parseOverviewParams, type ParseResult } from "./params";

const RULES = readFileSync(path.join(__dirname, "..", "..", "ops", "alerts.yml"), "utf8");
const BASE = "https://leasewatch.example.internal";
const SAMPLE_LABELS: Record<string, string> = { store: "pg-main", kind: "postgres", prefix: "tenant_1:billing-close" };

function fillTemplates(link: string): string {
  return link.replace(/\{\{\s*\$labels\.(\w+)\s*(\|\s*urlquery\s*)?\}\}/g, (_, label: string, urlquery?: string) => {
    const value = SAMPLE_LABELS[label];
    if (value === undefined) throw new Error(`no sample value for label ${label} in ${link}`);
    return urlquery ? encodeURIComponent(value) : value;
  });
}

const PARSERS: Record<string, (search: URLSearchParams) => ParseResult<unknown>> = {
  "/": (s) => parseOverviewParams(s),
  "/locks": (s) => parseLeasesParams(s),
  "/events": (s) => parseEventsParams(s),
};

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
const alerts = ZRules.parse(parseYaml(RULES)).groups.flatMap((g) => g.rules);
/** Every annotation whose value is a console link, by alert. */
const links = alerts.flatMap((rule) =>
  Object.entries(rule.annotations)
    .filter(([, value]) => value.startsWith(BASE))
    .map(([name, link]) => ({ alert: rule.alert, name, link })),
);

describe("ops/alerts.yml drill-down links", () => {
  it("has every alert, each with at least one link", () => {
    // Changing the rules means changing these numbers on purpose.
    expect(alerts).toHaveLength(8);
    expect(links).toHaveLength(15);
    for (const rule of alerts) expect(links.filter((l) => l.alert === rule.alert).length, rule.alert).toBeGreaterThan(0);
    // No link hides where the parse does not look (inside prose, or unquoted in a comment-free line).
    const mentioned = RULES.split("\n").filter((line) => !line.trimStart().startsWith("#") && line.includes(BASE));
    expect(mentioned).toHaveLength(links.length);
  });

  it.each(links.map((l) => [`${l.alert}.${l.name}`, l.link]))("%s opens a page", (_, link) => {
    const url = new URL(fillTemplates(link));
    const parse = PARSERS[url.pathname];
    expect(parse, `no console page at ${url.pathname}`).toBeDefined();
    const result = parse!(url.searchParams);
    expect(result.ok ? null : result.problem).toBeNull();
  });
});
