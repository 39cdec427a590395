"use client";
import { useEffect } from "react";

/**
 * Something unexpected failed while rendering a page (store outages and bad URL
 * parameters are handled in the pages themselves, so this is a real bug or a
 * missing permission). Says what happened and offers a retry.
 */
export default function PageError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  useEffect(() => {
    console.error(error);
  }, [error]);
  const isForbidden = error.name === "PermissionError" || /permission/i.test(error.message);
  return (
    <div role="alert" className="mx-auto max-w-xl rounded-lg border border-red-300 bg-red-50 p-5 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
      <h1 className="text-base font-semibold">{isForbidden ? "You can’t see this page" : "This page failed to load"}</h1>
      <p className="mt-2">
        {isForbidden
          ? "Your role does not include this view. Ask an administrator for the viewer or operator group."
          : "The console hit an unexpected error. The stores may be fine; try again, and if it keeps happening, report the reference below."}
      </p>
      {error.digest ? <p className="mt-2 font-mono text-xs opacity-80">Reference: {error.digest}</p> : null}
      <button
        type="button"
        onClick={reset}
        className="mt-4 rounded-md bg-red-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-red-800 dark:bg-red-200 dark:text-red-950"
      >
        Try again
      </button>
    </div>
  );
}
