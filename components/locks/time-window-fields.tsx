"use client";
import { useState } from "react";
import { FIELD, LABEL } from "./filter-fields";
import { WINDOW_LABELS } from "./labels";

/**
 * Window select plus From/To (UTC). From/to apply to a custom window only; they are
 * disabled (so not submitted) while a fixed window is chosen.
 */
/** `unsetLabel`: what no window means on this page (events default to the last 24 h). */
export function TimeWindowFields({ idPrefix, values, unsetLabel = "Any time" }: { idPrefix: string; values: URLSearchParams; unsetLabel?: string }) {
  const [window, setWindow] = useState(values.get("window") ?? (values.get("from") ? "custom" : ""));
  const isCustom = window === "custom";
  return (
    <>
      <div className="w-32">
        <label htmlFor={`${idPrefix}-window`} className={LABEL}>Window</label>
        <select id={`${idPrefix}-window`} name="window" value={window} onChange={(e) => setWindow(e.target.value)} className={FIELD}>
          <option value="">{unsetLabel}</option>
          {Object.entries(WINDOW_LABELS).map(([value, label]) => (
            <option key={value} value={value}>{label}</option>
          ))}
          <option value="custom">Custom (from/to)</option>
        </select>
      </div>
      <div className="w-44">
        <label htmlFor={`${idPrefix}-from`} className={LABEL}>From (UTC)</label>
        <input id={`${idPrefix}-from`} name="from" type="datetime-local" step="1" disabled={!isCustom} required={isCustom} defaultValue={(values.get("from") ?? "").slice(0, 19)} className={`${FIELD} disabled:opacity-50`} />
      </div>
      <div className="w-44">
        <label htmlFor={`${idPrefix}-to`} className={LABEL}>To (UTC)</label>
        <input id={`${idPrefix}-to`} name="to" type="datetime-local" step="1" disabled={!isCustom} defaultValue={(values.get("to") ?? "").slice(0, 19)} className={`${FIELD} disabled:opacity-50`} />
      </div>
    </>
  );
}
