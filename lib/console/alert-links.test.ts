/**
 * The drill-down links in ops/alerts.yml must open a page, not a "bad parameter"
 * notice: fill in the label templates the way Prometheus would and parse each
 * link with the page's own parameter parser.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
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

const links = [...RULES.matchAll(/"(https:\/\/leasewatch\.example\.internal[^"]*)"/g)].map((m) => m[1]!);

describe("ops/alerts.yml drill-down links", () => {
  it("every alert carries at least one link", () => {
    const alerts = RULES.split(/\n\s*- alert: /).slice(1);
    expect(alerts.length).toBeGreaterThanOrEqual(6);
    for (const alert of alerts) expect(alert, alert.split("\n")[0]).toContain(BASE);
  });

  it.each(links)("%s opens a page", (link) => {
    const url = new URL(fillTemplates(link));
    const parse = PARSERS[url.pathname];
    expect(parse, `no console page at ${url.pathname}`).toBeDefined();
    const result = parse!(url.searchParams);
    expect(result.ok ? null : result.problem).toBeNull();
  });
});
