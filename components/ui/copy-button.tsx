"use client";
import { useEffect, useState } from "react";
import { cx } from "./cx";

type CopyState = "idle" | "copied" | "failed";

/**
 * Puts `value` on the clipboard. The Clipboard API needs a secure context
 * (https, or http on 127.0.0.1/localhost); elsewhere, or when the browser
 * refuses, a hidden textarea and execCommand("copy") still work in most browsers.
 */
async function copyText(value: string): Promise<boolean> {
  if (window.isSecureContext && navigator.clipboard) {
    try {
      await navigator.clipboard.writeText(value);
      return true;
    } catch {
      // Refused (permissions policy, unfocused document): try the old way.
    }
  }
  const area = document.createElement("textarea");
  area.value = value;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  try {
    return document.execCommand("copy");
  } catch {
    return false;
  } finally {
    area.remove();
  }
}

/** A small "copy" button for ids and tokens, confirming with a visible (and announced) "copied". */
export function CopyButton({ value, label, className }: { value: string; label: string; className?: string }) {
  const [state, setState] = useState<CopyState>("idle");
  useEffect(() => {
    if (state === "idle") return;
    const timer = setTimeout(() => setState("idle"), 2_000);
    return () => clearTimeout(timer);
  }, [state]);
  return (
    <span className={cx("inline-flex items-center gap-1.5", className)}>
      <button
        type="button"
        aria-label={`Copy ${label}`}
        onClick={async () => setState((await copyText(value)) ? "copied" : "failed")}
        className="rounded border border-zinc-300 px-1.5 py-0 text-[11px] font-medium text-zinc-700 hover:bg-zinc-100 dark:border-zinc-600 dark:text-zinc-200 dark:hover:bg-zinc-800"
      >
        copy
      </button>
      <span role="status" className={cx("text-[11px]", state === "failed" ? "text-amber-800 dark:text-amber-300" : "text-emerald-800 dark:text-emerald-300")}>
        {state === "copied" ? "copied" : state === "failed" ? "copy refused: select the text and press Ctrl+C" : ""}
      </span>
    </span>
  );
}
