"use client";
import Form from "next/form";
import { TimeWindowFields } from "@/components/locks/time-window-fields";
import { FilterActions, KeptParam, SelectFilter, TextFilter } from "@/components/locks/filter-fields";
import { AUDIT_ACTIONS, AUDIT_OUTCOMES } from "@/lib/console/shared/views";
import { AUDIT_ACTION_LABELS } from "./audit-outcome-badge";

/** GET form: the URL is the filter (actor, resource prefix, action, outcome, time). */
export function AuditFilters({ values }: { values: URLSearchParams }) {
  return (
    <Form action="/audit" className="flex flex-wrap items-end gap-3 rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900/40">
      <TextFilter id="a-actor" name="actor" label="Actor (verified email or id)" values={values} placeholder="alice@example.com" className="w-52" />
      <TextFilter id="a-prefix" name="prefix" label="Resource or token name prefix" values={values} placeholder="tenant_123:" className="w-56" />
      {values.get("resource") ? <TextFilter id="a-resource" name="resource" label="Resource (exact)" values={values} className="w-56" /> : null}
      <KeptParam name="store" values={values} />
      <SelectFilter
        id="a-action"
        name="action"
        label="Action"
        defaultValue={values.get("action") ?? ""}
        options={AUDIT_ACTIONS.map((a) => [a, AUDIT_ACTION_LABELS[a] ?? a] as const)}
        anyLabel="Any action"
        className="w-40"
      />
      <SelectFilter
        id="a-outcome"
        name="outcome"
        label="Outcome"
        defaultValue={values.get("outcome") ?? ""}
        options={AUDIT_OUTCOMES.map((o) => [o, o.replaceAll("_", " ")] as const)}
        anyLabel="Any outcome"
        className="w-40"
      />
      <TimeWindowFields idPrefix="a" values={values} />
      <FilterActions clearHref="/audit" />
    </Form>
  );
}
