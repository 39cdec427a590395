import Link from "next/link";

/** Shared look of the GET filter forms (leases, events and audit). */
export const FIELD = "block w-full rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm dark:border-zinc-700 dark:bg-zinc-900";
export const LABEL = "block text-xs font-medium text-zinc-600 dark:text-zinc-400";

/** The "Store" select: empty value means all stores. */
export function StoreSelect({ id, defaultValue, storeNames }: { id: string; defaultValue: string; storeNames: readonly string[] }) {
  return (
    <div className="w-36">
      <label htmlFor={id} className={LABEL}>Store</label>
      <select id={id} name="store" defaultValue={defaultValue} className={FIELD}>
        <option value="">All stores</option>
        {storeNames.map((name) => (
          <option key={name} value={name}>{name}</option>
        ))}
      </select>
    </div>
  );
}

/** Apply (submit) and Clear (back to `clearHref` without filters). */
export function FilterActions({ clearHref }: { clearHref: string }) {
  return (
    <div className="flex gap-2">
      <button type="submit" className="rounded-md bg-zinc-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-zinc-700 dark:bg-zinc-100 dark:text-zinc-900 dark:hover:bg-zinc-300">
        Apply
      </button>
      <Link href={clearHref} className="rounded-md px-3 py-1.5 text-sm font-medium text-zinc-700 hover:bg-zinc-100 dark:text-zinc-300 dark:hover:bg-zinc-800">
        Clear
      </Link>
    </div>
  );
}
