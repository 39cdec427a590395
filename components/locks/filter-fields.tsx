import Link from "next/link";

/** Shared look of the GET filter forms (leases, events and audit). */
export const FIELD = "block w-full rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm dark:border-zinc-700 dark:bg-zinc-900";
export const LABEL = "block text-xs font-medium text-zinc-600 dark:text-zinc-400";

/** The "Store" select: empty value means all stores. */
export function StoreSelect({ id, defaultValue, storeNames, observedNames = [] }: { id: string; defaultValue: string; storeNames: readonly string[]; observedNames?: readonly string[] }) {
  return (
    <div className="w-36">
      <label htmlFor={id} className={LABEL}>Store</label>
      <select id={id} name="store" defaultValue={defaultValue} className={FIELD}>
        <option value="">All stores</option>
        {storeNames.map((name) => (
          <option key={name} value={name}>{name}</option>
        ))}
        {observedNames.length > 0 ? (
          <optgroup label="Observed">
            {observedNames.map((name) => (
              <option key={name} value={name}>{name}</option>
            ))}
          </optgroup>
        ) : null}
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

/** A text filter, filled from the URL's `name`; monospace, as the names and ids it matches are. `className` sets its width. */
export function TextFilter({
  id,
  name,
  label,
  values,
  className,
  placeholder,
  inputMode,
}: {
  id: string;
  name: string;
  label: string;
  values: URLSearchParams;
  className: string;
  placeholder?: string;
  inputMode?: "numeric";
}) {
  return (
    <div className={className}>
      <label htmlFor={id} className={LABEL}>{label}</label>
      <input id={id} name={name} inputMode={inputMode} defaultValue={values.get(name) ?? ""} placeholder={placeholder} className={`${FIELD} font-mono`} />
    </div>
  );
}

/** A select filter of `options` ([value, label]); `anyLabel` names the empty choice, when there is one. `className` sets its width. */
export function SelectFilter({
  id,
  name,
  label,
  defaultValue,
  options,
  anyLabel,
  className,
}: {
  id: string;
  name: string;
  label: string;
  defaultValue: string;
  options: ReadonlyArray<readonly [string, string]>;
  anyLabel?: string;
  className: string;
}) {
  return (
    <div className={className}>
      <label htmlFor={id} className={LABEL}>{label}</label>
      <select id={id} name={name} defaultValue={defaultValue} className={FIELD}>
        {anyLabel !== undefined ? <option value="">{anyLabel}</option> : null}
        {options.map(([value, text]) => (
          <option key={value} value={value}>{text}</option>
        ))}
      </select>
    </div>
  );
}

/** Keeps the URL's `name` through a submit without a field for it (set by links; cleared by Clear). */
export function KeptParam({ name, values }: { name: string; values: URLSearchParams }) {
  const value = values.get(name);
  return value ? <input type="hidden" name={name} value={value} /> : null;
}
