"use client";
import { useRouter } from "next/navigation";
import { useId, useState } from "react";
import type { JumpResult } from "@/lib/console/jump/jump-types";
import { fetchView, withSearch } from "@/lib/console/shared/fetch-view";

type JumpState = { status: "idle" } | { status: "looking" } | { status: "missing"; query: string; unread: string[] } | { status: "error"; message: string };

/**
 * The header's jump box: a resource, prefix, owner, lease id or fencing token,
 * resolved on the server across every store (/api/jump), then straight there.
 */
export function JumpBox() {
  const router = useRouter();
  const id = useId();
  const [value, setValue] = useState("");
  const [state, setState] = useState<JumpState>({ status: "idle" });

  async function jump(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const q = value.trim();
    if (!q) {
      setState({ status: "error", message: "Type a resource, prefix, owner, lease id or fencing token." });
      return;
    }
    setState({ status: "looking" });
    try {
      const result = await fetchView<JumpResult>(withSearch("/api/jump", new URLSearchParams({ q }).toString()), undefined, "jump");
      if (result.found && result.href) {
        setState({ status: "idle" });
        setValue("");
        router.push(result.href);
      } else {
        setState({ status: "missing", query: result.query, unread: result.unreadStores });
      }
    } catch (error) {
      setState({ status: "error", message: error instanceof Error ? error.message : "the jump failed" });
    }
  }

  const messageId = `${id}-message`;
  const message =
    state.status === "missing"
      ? `Nothing found for “${state.query}”: no resource, owner, lease id or token by that name, and no resource starts with it${
          state.unread.length > 0 ? ` (${state.unread.join(", ")} could not be read)` : ""
        }.`
      : state.status === "error"
        ? state.message
        : state.status === "looking"
          ? "Looking…"
          : "";

  return (
    <form role="search" aria-label="Jump to" onSubmit={jump} className="relative flex items-center gap-1">
      <label htmlFor={`${id}-q`} className="sr-only">
        Jump to a resource, prefix, owner, lease id or fencing token
      </label>
      <input
        id={`${id}-q`}
        type="search"
        value={value}
        onChange={(e) => {
          setValue(e.target.value);
          if (state.status !== "looking") setState({ status: "idle" });
        }}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            setValue("");
            setState({ status: "idle" });
          }
        }}
        placeholder="Jump to resource, owner, token…"
        aria-describedby={messageId}
        aria-invalid={state.status === "missing" || state.status === "error" ? true : undefined}
        autoComplete="off"
        spellCheck={false}
        maxLength={512}
        className="w-64 rounded-md border border-zinc-300 bg-white px-2 py-1 font-mono text-xs placeholder:font-sans placeholder:text-zinc-500 dark:border-zinc-700 dark:bg-zinc-900"
      />
      <button
        type="submit"
        disabled={state.status === "looking"}
        className="rounded-md border border-zinc-300 px-2 py-1 text-xs font-semibold hover:bg-zinc-100 disabled:opacity-60 dark:border-zinc-700 dark:hover:bg-zinc-800"
      >
        Go
      </button>
      <p
        id={messageId}
        role="status"
        className={
          message
            ? "absolute top-full left-0 z-40 mt-1 w-80 rounded-md border border-amber-300 bg-amber-50 px-2 py-1 text-xs text-amber-900 shadow dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
            : "sr-only"
        }
      >
        {message}
      </p>
    </form>
  );
}
