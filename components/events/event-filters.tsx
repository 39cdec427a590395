"use client";
import Form from "next/form";
import { EVENT_KIND_STYLE } from "@/components/locks/event-kind-badge";
import { TimeWindowFields } from "@/components/locks/time-window-fields";
import { FIELD, FilterActions, LABEL, StoreSelect } from "@/components/locks/filter-fields";
import { LEASE_EVENT_KINDS } from "@/lib/lease/types";

/**
 * GET form: kinds are checkboxes (repeated `kind=`), the rest plain fields, so
 * the URL is the filter. From/to (UTC) apply to a custom window; they are
 * disabled (so not submitted) while a fixed window is chosen.
 */
export function EventFilters({ values, storeNames }: { values: URLSearchParams; storeNames: readonly string[] }) {
  const kinds = new Set(values.getAll("kind").flatMap((k) => k.split(",")));
  return (
    <Form action="/events" className="space-y-3 rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900/40">
      <fieldset>
        <legend className={LABEL}>Kinds (none ticked: all)</legend>
        <div className="mt-1 flex flex-wrap gap-x-4 gap-y-1">
          {LEASE_EVENT_KINDS.map((kind) => (
            <label key={kind} className="inline-flex items-center gap-1.5 text-sm">
              <input type="checkbox" name="kind" value={kind} defaultChecked={kinds.has(kind)} className="size-3.5" />
              {EVENT_KIND_STYLE[kind].label}
            </label>
          ))}
        </div>
      </fieldset>
      <div className="flex flex-wrap items-end gap-3">
        <StoreSelect id="e-store" defaultValue={values.get("store") ?? ""} storeNames={storeNames} />
        <div className="w-60">
          <label htmlFor="e-prefix" className={LABEL}>Resource prefix</label>
          <input id="e-prefix" name="prefix" defaultValue={values.get("prefix") ?? ""} placeholder="tenant_123:" className={`${FIELD} font-mono`} />
        </div>
        {values.get("resource") ? (
          <div className="w-60">
            <label htmlFor="e-resource" className={LABEL}>Resource (exact)</label>
            <input id="e-resource" name="resource" defaultValue={values.get("resource") ?? ""} className={`${FIELD} font-mono`} />
          </div>
        ) : null}
        <div className="w-40">
          <label htmlFor="e-owner" className={LABEL}>Owner</label>
          <input id="e-owner" name="owner" defaultValue={values.get("owner") ?? ""} className={`${FIELD} font-mono`} />
        </div>
        <div className="w-32">
          <label htmlFor="e-task" className={LABEL}>Task</label>
          <input id="e-task" name="task" defaultValue={values.get("task") ?? ""} className={`${FIELD} font-mono`} />
        </div>
        {/* Set by links (a token or lease id cell, the jump box); shown only then, so they can be cleared. */}
        {values.get("token") ? (
          <div className="w-48">
            <label htmlFor="e-token" className={LABEL}>Fencing token</label>
            <input id="e-token" name="token" inputMode="numeric" defaultValue={values.get("token") ?? ""} className={`${FIELD} font-mono`} />
          </div>
        ) : null}
        {values.get("lease") ? (
          <div className="w-72">
            <label htmlFor="e-lease" className={LABEL}>Lease id</label>
            <input id="e-lease" name="lease" defaultValue={values.get("lease") ?? ""} className={`${FIELD} font-mono`} />
          </div>
        ) : null}
        <TimeWindowFields idPrefix="e" values={values} unsetLabel="Last 24 h (default)" />
        <FilterActions clearHref="/events" />
      </div>
    </Form>
  );
}
