"use client";
import Form from "next/form";
import { EVENT_KIND_STYLE } from "@/components/locks/event-kind-badge";
import { TimeWindowFields } from "@/components/locks/time-window-fields";
import { FilterActions, KeptParam, LABEL, StoreSelect, TextFilter } from "@/components/locks/filter-fields";
import { LEASE_EVENT_KINDS } from "@leasewatch/lease/model";

/**
 * GET form: kinds are checkboxes (repeated `kind=`), the rest plain fields, so
 * the URL is the filter. From/to (UTC) apply to a custom window; they are
 * disabled (so not submitted) while a fixed window is chosen.
 */
export function EventFilters({ values, storeNames, observedNames }: { values: URLSearchParams; storeNames: readonly string[]; observedNames?: readonly string[] }) {
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
        <StoreSelect id="e-store" defaultValue={values.get("store") ?? ""} storeNames={storeNames} observedNames={observedNames} />
        <TextFilter id="e-prefix" name="prefix" label="Resource prefix" values={values} placeholder="tenant_123:" className="w-60" />
        {values.get("resource") ? <TextFilter id="e-resource" name="resource" label="Resource (exact)" values={values} className="w-60" /> : null}
        <TextFilter id="e-owner" name="owner" label="Owner" values={values} className="w-40" />
        <TextFilter id="e-task" name="task" label="Task" values={values} className="w-32" />
        {/* Set by links (a token or lease id cell, the jump box); shown only then, so they can be cleared. */}
        {values.get("token") ? <TextFilter id="e-token" name="token" label="Fencing token" values={values} inputMode="numeric" className="w-48" /> : null}
        {values.get("lease") ? <TextFilter id="e-lease" name="lease" label="Lease id" values={values} className="w-72" /> : null}
        <TimeWindowFields idPrefix="e" values={values} unsetLabel="Last 24 h (default)" />
        {/* The moment the window ends at stays while the filters change; "Back to now" leaves it. */}
        <KeptParam name="at" values={values} />
        <FilterActions clearHref="/events" />
      </div>
    </Form>
  );
}
