"use client";
import Form from "next/form";
import { TimeWindowFields } from "@/components/locks/time-window-fields";
import { FIELD, FilterActions, LABEL } from "@/components/locks/filter-fields";
import { AUDIT_ACTIONS, AUDIT_OUTCOMES } from "@/lib/console/views";
import { AUDIT_ACTION_LABELS } from "./audit-outcome-badge";

/** GET form: the URL is the filter (actor, resource prefix, action, outcome, time). */
export function AuditFilters({ values }: { values: URLSearchParams }) {
  return (
    <Form action="/audit" className="flex flex-wrap items-end gap-3 rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900/40">
      <div className="w-52">
        <label htmlFor="a-actor" className={LABEL}>Actor (verified email or id)</label>
        <input id="a-actor" name="actor" defaultValue={values.get("actor") ?? ""} placeholder="alice@example.com" className={`${FIELD} font-mono`} />
      </div>
      <div className="w-56">
        <label htmlFor="a-prefix" className={LABEL}>Resource or token name prefix</label>
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
        <label htmlFor="a-action" className={LABEL}>Action</label>
        <select id="a-action" name="action" defaultValue={values.get("action") ?? ""} className={FIELD}>
          <option value="">Any action</option>
          {AUDIT_ACTIONS.map((a) => (
            <option key={a} value={a}>{AUDIT_ACTION_LABELS[a] ?? a}</option>
          ))}
        </select>
      </div>
      <div className="w-40">
        <label htmlFor="a-outcome" className={LABEL}>Outcome</label>
        <select id="a-outcome" name="outcome" defaultValue={values.get("outcome") ?? ""} className={FIELD}>
          <option value="">Any outcome</option>
          {AUDIT_OUTCOMES.map((o) => (
            <option key={o} value={o}>{o.replaceAll("_", " ")}</option>
          ))}
        </select>
      </div>
      <TimeWindowFields idPrefix="a" values={values} />
      <FilterActions clearHref="/audit" />
    </Form>
  );
}
