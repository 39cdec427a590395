"use client";
import { useId, useState } from "react";

/**
 * "Share": the current view as a link that shows the same thing tomorrow. A relative
 * window (`window=1h`) is replaced by its absolute UTC range (`window=custom&from=…&to=…`);
 * `at` and every filter are kept. The link is also shown in a field, for when the
 * clipboard is not allowed.
 */
export function ShareLink({ path, search, from, to }: { path: string; search: string; from?: string | null; to?: string | null }) {
  const [link, setLink] = useState<string | null>(null);
  const [status, setStatus] = useState("");
  const fieldId = useId();

  const share = async () => {
    const params = new URLSearchParams(search);
    params.delete("cursor");
    params.delete("prev");
    if (from && to) {
      params.set("window", "custom");
      params.set("from", from);
      params.set("to", to);
    }
    const url = `${window.location.origin}${path}?${params.toString()}`;
    setLink(url);
    try {
      await navigator.clipboard.writeText(url);
      setStatus("Link copied");
    } catch {
      setStatus("Copy the link below");
    }
  };

  return (
    <div className="flex flex-wrap items-center gap-2 text-sm">
      <button
        type="button"
        onClick={() => void share()}
        className="rounded-md border border-zinc-300 px-2.5 py-1 font-medium hover:bg-zinc-50 focus-visible:outline focus-visible:outline-2 focus-visible:outline-offset-2 dark:border-zinc-700 dark:hover:bg-zinc-900"
      >
        Share
      </button>
      <span aria-live="polite" className="text-zinc-600 dark:text-zinc-400">
        {status}
      </span>
      {link ? (
        <>
          <label htmlFor={fieldId} className="sr-only">
            Link to this view
          </label>
          <input
            id={fieldId}
            readOnly
            value={link}
            data-testid="share-link"
            onFocus={(e) => e.currentTarget.select()}
            className="w-[28rem] max-w-full rounded border border-zinc-300 bg-white px-2 py-1 font-mono text-xs dark:border-zinc-700 dark:bg-zinc-950"
          />
        </>
      ) : null}
    </div>
  );
}
