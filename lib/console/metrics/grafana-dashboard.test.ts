/**
 * ops/grafana-dashboard.json: every panel queries series /api/metrics serves, and
 * ops/grafana-workers-dashboard.json series the lease library's OpenTelemetry instruments
 * become (as the Prometheus exporter names them), with PromQL that Prometheus accepts
 * (checked by promtool when installed), and every data link, filled in as Grafana would,
 * opens a console page rather than a "bad parameter" notice.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseEventsParams, parseLeasesParams, parseOverviewParams, type ParseResult } from "@/lib/console/shared/params";

const ROOT = path.join(__dirname, "..", "..", "..");
const ZDashboard = z.object({
  panels: z
    .array(
      z.object({
        title: z.string(),
        targets: z.array(z.object({ expr: z.string().min(1) })).min(1),
        fieldConfig: z.object({ defaults: z.object({ links: z.array(z.object({ title: z.string(), url: z.string() })) }) }),
      }),
    )
    .min(1),
});
const readDashboard = (file: string) => ZDashboard.parse(JSON.parse(readFileSync(path.join(ROOT, "ops", file), "utf8")));

/** What getMetricsText declares (gauges, counters and the histogram families' _bucket, _sum and _count). */
const source = readFileSync(path.join(__dirname, "get-metrics-text.ts"), "utf8");
const SERVED = new Set([...source.matchAll(/name: "(leasewatch_\w+)"/g)].map((m) => m[1]!));
for (const family of ["leasewatch_hold_duration_seconds", "leasewatch_renewal_slack_ratio"]) {
  expect(SERVED.has(family), family).toBe(true);
  for (const suffix of ["_bucket", "_sum", "_count"]) SERVED.add(`${family}${suffix}`);
}

/** What the library's instruments (lib/lease/telemetry.ts) are called in Prometheus: dots become underscores, counters get _total. */
const telemetrySource = readFileSync(path.join(ROOT, "lib", "lease", "telemetry.ts"), "utf8");
const INSTRUMENTED = new Set(
  [...telemetrySource.matchAll(/(seconds|createHistogram|createCounter|createUpDownCounter|createObservableGauge)\("(leasewatch\.[a-z_.]+)"/g)].flatMap(([, kind, name]) => {
    const base = name!.replaceAll(".", "_");
    if (kind === "seconds" || kind === "createHistogram") return ["_bucket", "_sum", "_count"].map((suffix) => `${base}${suffix}`);
    return [kind === "createCounter" ? `${base}_total` : base];
  }),
);
/** Their attributes, which become labels (leasewatch_store, …): not series names. */
const INSTRUMENT_LABELS = new Set([...telemetrySource.matchAll(/ATTR_\w+ = "(leasewatch\.[a-z_.]+)"/g)].map(([, name]) => name!.replaceAll(".", "_")));

const PARSERS: Record<string, (search: URLSearchParams) => ParseResult<unknown>> = {
  "/": (s) => parseOverviewParams(s),
  "/locks": (s) => parseLeasesParams(s),
  "/events": (s) => parseEventsParams(s),
};
const SAMPLE_LABELS: Record<string, string> = { store: "pg-main", kind: "expired", state: "overdue", prefix: "tenant_1:billing close", prefix_group: "tenant_1:billing close" };

/** Grafana's interpolation of the variables the links use. */
function fillLink(url: string): string {
  return url
    .replace("${console}", "https://leasewatch.example.internal")
    .replace("${__from:date:iso}", "2026-11-26T06:00:00.000Z")
    .replace("${__to:date:iso}", "2026-11-26T08:00:00.000Z")
    .replace(/\$\{__field\.labels\.(\w+)(:percentencode)?\}/g, (_, label: string, encode?: string) => {
      const value = SAMPLE_LABELS[label];
      if (value === undefined) throw new Error(`no sample value for label ${label} in ${url}`);
      return encode ? encodeURIComponent(value) : value;
    });
}

describe.each([
  { file: "grafana-dashboard.json", served: SERVED },
  { file: "grafana-workers-dashboard.json", served: INSTRUMENTED },
])("ops/$file", ({ file, served: SERVED }) => {
  const dashboard = readDashboard(file);
  const links = dashboard.panels.flatMap((p) => p.fieldConfig.defaults.links.map((l) => ({ panel: p.title, ...l })));

  it("has a console link on every panel and queries only series it is meant for", () => {
    for (const panel of dashboard.panels) {
      expect(panel.fieldConfig.defaults.links.length, panel.title).toBeGreaterThan(0);
      for (const { expr } of panel.targets) {
        const names = [...expr.matchAll(/\b(leasewatch_\w+)/g)].map((m) => m[1]!).filter((name) => !INSTRUMENT_LABELS.has(name));
        expect(names.length, expr).toBeGreaterThan(0);
        for (const name of names) expect(SERVED, `${panel.title}: ${name}`).toContain(name);
      }
    }
  });

  it.each(links.map((l) => [`${l.panel}: ${l.title}`, l.url]))("%s opens a console page", (_, url) => {
    expect(url.startsWith("${console}/")).toBe(true);
    const filled = new URL(fillLink(url));
    const parse = PARSERS[filled.pathname];
    expect(parse, `no console page at ${filled.pathname}`).toBeDefined();
    const result = parse!(filled.searchParams);
    expect(result.ok ? null : result.problem).toBeNull();
  });

  const promtool = (() => {
    try {
      execFileSync("promtool", ["--version"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  })();
  it.skipIf(!promtool)("every query is PromQL that Prometheus accepts (promtool; skipped when promtool is not installed)", () => {
    const rules = dashboard.panels.flatMap((p, i) =>
      p.targets.map((t, j) => ({ record: `dashboard:panel${i}:${j}`, expr: t.expr.replaceAll("$__rate_interval", "5m").replaceAll("$store", ".*") })),
    );
    const dir = mkdtempSync(path.join(os.tmpdir(), "lw-grafana-"));
    try {
      const file = path.join(dir, "rules.json");
      // JSON is YAML: promtool reads it as a rules file.
      writeFileSync(file, JSON.stringify({ groups: [{ name: "dashboard", rules }] }));
      expect(execFileSync("promtool", ["check", "rules", file], { encoding: "utf8" })).toContain(`SUCCESS: ${rules.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
