import Form from "next/form";
import { LEASE_SORT_LABELS, LOCK_STATE_LABELS, WINDOW_LABELS } from "@/components/locks/labels";
import { FilterActions, KeptParam, SelectFilter, StoreSelect, TextFilter } from "./filter-fields";

/**
 * A plain GET form: the filters become the URL (shareable, linkable from alerts)
 * and work without JavaScript; next/form turns the submit into a client navigation.
 */
export function LeaseFilters({ values, storeNames }: { values: URLSearchParams; storeNames: readonly string[] }) {
  const state = values.get("state") ?? "";
  return (
    <Form action="/locks" className="flex flex-wrap items-end gap-3 rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900/40">
      <StoreSelect id="f-store" defaultValue={values.get("store") ?? ""} storeNames={storeNames} />
      <TextFilter id="f-prefix" name="prefix" label="Resource prefix" values={values} placeholder="tenant_123:billing-close" className="w-64" />
      <TextFilter id="f-owner" name="owner" label="Owner" values={values} className="w-40" />
      <TextFilter id="f-task" name="task" label="Task" values={values} className="w-40" />
      <SelectFilter id="f-state" name="state" label="State" defaultValue={state} options={Object.entries(LOCK_STATE_LABELS)} anyLabel="Any current" className="w-44" />
      {state === "stuck" ? (
        <p className="w-40 pb-1.5 text-xs text-zinc-600 dark:text-zinc-400">Sorted by how long overdue, longest first.</p>
      ) : state === "expired" ? (
        <SelectFilter id="f-window" name="window" label="Expired within" defaultValue={values.get("window") ?? "1h"} options={Object.entries(WINDOW_LABELS)} className="w-32" />
      ) : (
        <SelectFilter id="f-sort" name="sort" label="Sort" defaultValue={values.get("sort") ?? "expires"} options={Object.entries(LEASE_SORT_LABELS)} className="w-40" />
      )}
      {/* The moment the list is read as of stays while the filters change; "Back to now" leaves it. */}
      <KeptParam name="at" values={values} />
      <FilterActions clearHref="/locks" />
    </Form>
  );
}
