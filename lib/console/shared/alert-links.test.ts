/**
 * The drill-down links in ops/alerts.yml must open a page, not a "bad parameter"
 * notice: fill in the label templates the way Prometheus would and parse each
 * link with the page's own parameter parser. The rules are parsed as YAML, so a link
 * is found wherever Prometheus would find it. Each link's `at=` must read the start of
 * its own alert (promtool checks the values: ops/alerts.test.yml).
 */
import { describe, expect, it } from "vitest";
import { ALERT_LINKS as links, ALERT_RULES as alerts, AT_TEMPLATE, fillTemplates as fill, RULES_BASE as BASE, RULES_TEXT as RULES } from "@/test/support/alert-links";
import { parseEventsParams, parseLeasesParams, parseOverviewParams, type ParseResult } from "./params";

const SAMPLE_LABELS: Record<string, string> = {
  store: "pg-main",
  kind: "postgres",
  prefix: "tenant_1:billing-close",
  prefix_group: "tenant_1:billing-close",
  state: "overdue",
};
const SAMPLE_AT = "2026-11-26T08:00:00Z";
const fillTemplates = (link: string) => fill(link, SAMPLE_LABELS, SAMPLE_AT);

const PARSERS: Record<string, (search: URLSearchParams) => ParseResult<unknown>> = {
  "/": (s) => parseOverviewParams(s),
  "/locks": (s) => parseLeasesParams(s),
  "/events": (s) => parseEventsParams(s),
};

describe("ops/alerts.yml drill-down links", () => {
  it("has every alert, each with at least one link", () => {
    // Changing the rules means changing these numbers on purpose.
    expect(alerts).toHaveLength(17);
    expect(links).toHaveLength(27);
    for (const rule of alerts) expect(links.filter((l) => l.alert === rule.alert).length, rule.alert).toBeGreaterThan(0);
    // No link hides where the parse does not look (inside prose, or unquoted in a comment-free line).
    const mentioned = RULES.split("\n").filter((line) => !line.trimStart().startsWith("#") && line.includes(BASE));
    expect(mentioned).toHaveLength(links.length);
  });

  it.each(links.map((l) => [`${l.alert}.${l.name}`, l.alert, l.link]))("%s carries at= for its own alert's start", (_, alert, link) => {
    const match = AT_TEMPLATE.exec(link);
    expect(match, link).not.toBeNull();
    const [, name, selectorLabels, args] = match!;
    expect(name).toBe(alert);
    // The selector names each label once, in the order the printf arguments give them.
    const selected = [...selectorLabels!.matchAll(/,(\w+)=%q/g)].map((m) => m[1]);
    const given = [...args!.matchAll(/\$labels\.(\w+)/g)].map((m) => m[1]);
    expect(selected).toEqual(given);
    expect(selected).toContain("store");
    expect(new URL(fillTemplates(link)).searchParams.get("at")).toBe(SAMPLE_AT);
  });

  it.each(links.map((l) => [`${l.alert}.${l.name}`, l.link]))("%s opens a page", (_, link) => {
    const url = new URL(fillTemplates(link));
    const parse = PARSERS[url.pathname];
    expect(parse, `no console page at ${url.pathname}`).toBeDefined();
    const result = parse!(url.searchParams);
    expect(result.ok ? null : result.problem).toBeNull();
  });
});
