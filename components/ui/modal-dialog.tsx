"use client";
import { useEffect, useId, useRef } from "react";
import { cx } from "./cx";

/**
 * A modal dialog on the native `<dialog>` element: `showModal()` makes the rest
 * of the page inert, Esc closes it, and it is labelled by its title. Tab wraps
 * from the last control to the first (and Shift+Tab back): the native dialog
 * alone lets focus leave for the browser's own toolbar. Focus starts on the
 * element marked `data-autofocus` (the first field to fill in), else on the first
 * control; it goes back to whatever opened it when it closes (a page that replaces
 * the opener with a result moves focus to the result itself).
 */

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), textarea:not([disabled]), select:not([disabled]), [tabindex]:not([tabindex="-1"])';

function trapTab(event: React.KeyboardEvent<HTMLDialogElement>): void {
  if (event.key !== "Tab") return;
  const focusable = [...event.currentTarget.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.offsetParent !== null || el === document.activeElement);
  const first = focusable[0];
  const last = focusable.at(-1);
  if (!first || !last) return;
  if (event.shiftKey && document.activeElement === first) {
    event.preventDefault();
    last.focus();
  } else if (!event.shiftKey && document.activeElement === last) {
    event.preventDefault();
    first.focus();
  }
}
export function ModalDialog({
  open,
  onClose,
  title,
  description,
  children,
  className,
}: {
  open: boolean;
  onClose: () => void;
  title: string;
  description?: React.ReactNode;
  children: React.ReactNode;
  className?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const descriptionId = useId();
  const onCloseRef = useRef(onClose);
  useEffect(() => {
    onCloseRef.current = onClose;
  }, [onClose]);

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      dialog.showModal();
      // React's autoFocus runs before showModal(), which then focuses the first control (✕) instead.
      dialog.querySelector<HTMLElement>("[data-autofocus]")?.focus();
      return () => {
        if (dialog.open) dialog.close();
        opener?.focus();
      };
    }
  }, [open]);

  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      aria-describedby={description ? descriptionId : undefined}
      // Esc (and any other close) goes through the owner's state, so React stays the one source of truth.
      onCancel={(e) => {
        e.preventDefault();
        onCloseRef.current();
      }}
      onClose={() => onCloseRef.current()}
      onKeyDown={trapTab}
      className={cx(
        "m-auto w-[calc(100%-1rem)] max-w-2xl rounded-lg border border-zinc-200 bg-white p-0 text-zinc-900 shadow-xl dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100",
        className,
      )}
    >
      {open ? (
        <div className="max-h-[calc(100vh-4rem)] overflow-y-auto p-5">
          <div className="mb-4 flex items-start justify-between gap-4">
            <div>
              <h2 id={titleId} className="text-base font-semibold">
                {title}
              </h2>
              {description ? (
                <div id={descriptionId} className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">
                  {description}
                </div>
              ) : null}
            </div>
            <button
              type="button"
              onClick={() => onCloseRef.current()}
              className="rounded-md px-2 py-1 text-sm text-zinc-600 hover:bg-zinc-100 focus-visible:outline-2 focus-visible:outline-sky-600 dark:text-zinc-300 dark:hover:bg-zinc-800"
              aria-label="Close"
            >
              ✕
            </button>
          </div>
          {children}
        </div>
      ) : null}
    </dialog>
  );
}
