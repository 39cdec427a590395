import Form from "next/form";
import { LEASE_SORT_LABELS, LOCK_STATE_LABELS, WINDOW_LABELS } from "@/components/locks/labels";
import { FIELD, FilterActions, LABEL, StoreSelect } from "./filter-fields";

/**
 * A plain GET form: the filters become the URL (shareable, linkable from alerts)
 * and work without JavaScript; next/form turns the submit into a client navigation.
 */
export function LeaseFilters({ values, storeNames }: { values: URLSearchParams; storeNames: readonly string[] }) {
  const state = values.get("state") ?? "";
  return (
    <Form action="/locks" className="flex flex-wrap items-end gap-3 rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900/40">
      <StoreSelect id="f-store" defaultValue={values.get("store") ?? ""} storeNames={storeNames} />
      <div className="w-64">
        <label htmlFor="f-prefix" className={LABEL}>Resource prefix</label>
        <input id="f-prefix" name="prefix" defaultValue={values.get("prefix") ?? ""} placeholder="tenant_123:billing-close" className={`${FIELD} font-mono`} />
      </div>
      <div className="w-40">
        <label htmlFor="f-owner" className={LABEL}>Owner</label>
        <input id="f-owner" name="owner" defaultValue={values.get("owner") ?? ""} className={`${FIELD} font-mono`} />
      </div>
      <div className="w-40">
        <label htmlFor="f-task" className={LABEL}>Task</label>
        <input id="f-task" name="task" defaultValue={values.get("task") ?? ""} className={`${FIELD} font-mono`} />
      </div>
      <div className="w-44">
        <label htmlFor="f-state" className={LABEL}>State</label>
        <select id="f-state" name="state" defaultValue={state} className={FIELD}>
          <option value="">Any current</option>
          {Object.entries(LOCK_STATE_LABELS).map(([value, label]) => (
            <option key={value} value={value}>{label}</option>
          ))}
        </select>
      </div>
      {state === "expired" ? (
        <div className="w-32">
          <label htmlFor="f-window" className={LABEL}>Expired within</label>
          <select id="f-window" name="window" defaultValue={values.get("window") ?? "1h"} className={FIELD}>
            {Object.entries(WINDOW_LABELS).map(([value, label]) => (
              <option key={value} value={value}>{label}</option>
            ))}
          </select>
        </div>
      ) : (
        <div className="w-40">
          <label htmlFor="f-sort" className={LABEL}>Sort</label>
          <select id="f-sort" name="sort" defaultValue={values.get("sort") ?? "expires"} className={FIELD}>
            {Object.entries(LEASE_SORT_LABELS).map(([value, label]) => (
              <option key={value} value={value}>{label}</option>
            ))}
          </select>
        </div>
      )}
      <FilterActions clearHref="/locks" />
    </Form>
  );
}
