"use client";
import Form from "next/form";
import { useState } from "react";
import { FIELD, FilterActions, LABEL } from "@/components/locks/filter-fields";
import { WINDOW_LABELS } from "@/components/locks/labels";
import { AUDIT_OUTCOMES } from "@/lib/console/views";

/** GET form: the URL is the filter (actor, resource prefix, outcome, time). */
export function AuditFilters({ values }: { values: URLSearchParams }) {
  const [window, setWindow] = useState(values.get("window") ?? (values.get("from") ? "custom" : ""));
  const isCustom = window === "custom";
  return (
    <Form action="/audit" className="flex flex-wrap items-end gap-3 rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900/40">
      <div className="w-52">
        <label htmlFor="a-actor" className={LABEL}>Actor (email or id)</label>
        <input id="a-actor" name="actor" defaultValue={values.get("actor") ?? ""} placeholder="alice@example.com" className={`${FIELD} font-mono`} />
      </div>
      <div className="w-56">
        <label htmlFor="a-prefix" className={LABEL}>Resource prefix</label>
        <input id="a-prefix" name="prefix" defaultValue={values.get("prefix") ?? ""} placeholder="tenant_123:" className={`${FIELD} font-mono`} />
      </div>
      {values.get("resource") ? (
        <div className="w-56">
          <label htmlFor="a-resource" className={LABEL}>Resource (exact)</label>
          <input id="a-resource" name="resource" defaultValue={values.get("resource") ?? ""} className={`${FIELD} font-mono`} />
        </div>
      ) : null}
      {values.get("store") ? <input type="hidden" name="store" value={values.get("store") ?? ""} /> : null}
      <div className="w-40">
        <label htmlFor="a-outcome" className={LABEL}>Outcome</label>
        <select id="a-outcome" name="outcome" defaultValue={values.get("outcome") ?? ""} className={FIELD}>
          <option value="">Any outcome</option>
          {AUDIT_OUTCOMES.map((o) => (
            <option key={o} value={o}>{o.replace("_", " ")}</option>
          ))}
        </select>
      </div>
      <div className="w-32">
        <label htmlFor="a-window" className={LABEL}>Window</label>
        <select id="a-window" name="window" value={window} onChange={(e) => setWindow(e.target.value)} className={FIELD}>
          <option value="">Any time</option>
          {Object.entries(WINDOW_LABELS).map(([value, label]) => (
            <option key={value} value={value}>{label}</option>
          ))}
          <option value="custom">Custom (from/to)</option>
        </select>
      </div>
      <div className="w-44">
        <label htmlFor="a-from" className={LABEL}>From (UTC)</label>
        <input id="a-from" name="from" type="datetime-local" step="1" disabled={!isCustom} required={isCustom} defaultValue={(values.get("from") ?? "").slice(0, 19)} className={`${FIELD} disabled:opacity-50`} />
      </div>
      <div className="w-44">
        <label htmlFor="a-to" className={LABEL}>To (UTC)</label>
        <input id="a-to" name="to" type="datetime-local" step="1" disabled={!isCustom} defaultValue={(values.get("to") ?? "").slice(0, 19)} className={`${FIELD} disabled:opacity-50`} />
      </div>
      <FilterActions clearHref="/audit" />
    </Form>
  );
}
