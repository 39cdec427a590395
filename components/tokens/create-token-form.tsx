"use client";
import { useId, useState } from "react";
import { FIELD, LABEL, DialogActions } from "@/components/ui/form-controls";
import { API_TOKEN_ACTION_HELP, API_TOKEN_ACTIONS, DEFAULT_TOKEN_DAYS, MAX_TOKEN_DAYS, TOKEN_EXPIRY_DAYS, type CreateTokenResult } from "@/lib/console/tokens/token-types";
import { useCreateTokenMutation } from "@/lib/console/tokens/token-mutations";
import { PRIMARY_BUTTON } from "./access";
import { RefusalNotice } from "./refusal-notice";

/** "tenant_1:, tenant_2:" or one per line → the list (blank entries dropped). */
export function splitPrefixes(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
}

/**
 * The create form. The browser only helps (required fields, defaults); the server
 * validates everything again and answers with field issues.
 */
export function CreateTokenForm({
  storeNames,
  scopePrefixes,
  onCreated,
  onCancel,
}: {
  storeNames: readonly string[];
  /** The operator's scope: every token prefix must start with one of these (null: no limit). */
  scopePrefixes: readonly string[] | null;
  onCreated: (result: Extract<CreateTokenResult, { ok: true }>) => void;
  onCancel: () => void;
}) {
  const id = useId();
  const mutation = useCreateTokenMutation();
  const [name, setName] = useState("");
  // A scoped operator starts from their own scope, which they can then narrow.
  const [prefixes, setPrefixes] = useState(scopePrefixes ? scopePrefixes.join("\n") : "");
  const [stores, setStores] = useState<string[]>([...storeNames]);
  const [actions, setActions] = useState<string[]>([...API_TOKEN_ACTIONS]);
  const [days, setDays] = useState(DEFAULT_TOKEN_DAYS);
  const refusal = mutation.data && !mutation.data.ok ? mutation.data : null;
  const toggle = (list: string[], value: string, on: boolean) => (on ? [...new Set([...list, value])] : list.filter((v) => v !== value));

  return (
    <form
      aria-labelledby={`${id}-title`}
      className="space-y-4 rounded-lg border border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900/40"
      onSubmit={(event) => {
        event.preventDefault();
        mutation.mutate(
          { name: name.trim(), prefixes: splitPrefixes(prefixes), stores, actions, expiresInDays: days },
          { onSuccess: (result) => (result.ok ? onCreated(result) : undefined) },
        );
      }}
    >
      <div>
        <h2 id={`${id}-title`} className="text-base font-semibold">
          New API token
        </h2>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          A worker sends it as <code className="font-mono">Authorization: Bearer …</code>. It reaches only resources under its prefixes, on its stores, for its actions.
        </p>
      </div>
      <div className="grid grid-cols-1 gap-4 md:grid-cols-2">
        <HelpedField id={`${id}-name`} label="Name" help={<>Letters, digits, <code>.</code> <code>_</code> <code>-</code>; unique, and it stays taken after revocation.</>}>
          <input
            id={`${id}-name`}
            name="name"
            required
            maxLength={64}
            pattern="[A-Za-z0-9._\-]{1,64}"
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="billing-workers"
            aria-describedby={`${id}-name-help`}
            className={`${FIELD} font-mono`}
          />
        </HelpedField>
        <HelpedField
          id={`${id}-prefixes`}
          label="Tenant prefixes"
          help={
            <>
              One per line or comma-separated. Anything outside them answers 404 to this token.
              {scopePrefixes ? (
                <>
                  {" "}
                  Your operator role covers only {scopePrefixes.map((p, i) => (
                    <span key={p}>
                      {i > 0 ? ", " : ""}
                      <code className="font-mono">{p}*</code>
                    </span>
                  ))}
                  : each prefix must start with {scopePrefixes.length === 1 ? "it" : "one of them"}, e.g. <code className="font-mono">{scopePrefixes[0]}billing:</code>.
                </>
              ) : null}
            </>
          }
        >
          <textarea
            id={`${id}-prefixes`}
            name="prefixes"
            required
            rows={2}
            value={prefixes}
            onChange={(e) => setPrefixes(e.target.value)}
            placeholder="tenant_123:"
            aria-describedby={`${id}-prefixes-help`}
            className={`${FIELD} font-mono`}
          />
        </HelpedField>
        <CheckboxGroup legend="Stores">
          {storeNames.map((store) => (
            <label key={store} className="inline-flex items-center gap-1.5 font-mono text-sm">
              <input type="checkbox" name="stores" value={store} checked={stores.includes(store)} onChange={(e) => setStores(toggle(stores, store, e.target.checked))} />
              {store}
            </label>
          ))}
        </CheckboxGroup>
        <CheckboxGroup legend="Actions">
          {API_TOKEN_ACTIONS.map((action) => (
            <label key={action} className="inline-flex items-center gap-1.5 text-sm" title={API_TOKEN_ACTION_HELP[action]}>
              <input type="checkbox" name="actions" value={action} checked={actions.includes(action)} onChange={(e) => setActions(toggle(actions, action, e.target.checked))} />
              <span className="font-mono">{action}</span>
            </label>
          ))}
        </CheckboxGroup>
        <div>
          <label htmlFor={`${id}-days`} className={LABEL}>
            Expires in
          </label>
          <select id={`${id}-days`} name="expiresInDays" value={days} onChange={(e) => setDays(Number(e.target.value))} className={`${FIELD} max-w-48`}>
            {TOKEN_EXPIRY_DAYS.map((d) => (
              <option key={d} value={d}>
                {d} days
              </option>
            ))}
          </select>
          <p className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">At most {MAX_TOKEN_DAYS} days: rotate by creating a new token, then revoking this one.</p>
        </div>
      </div>
      {refusal ? <RefusalNotice refusal={refusal} /> : null}
      <DialogActions onCancel={onCancel}>
        <button type="submit" disabled={mutation.isPending} className={PRIMARY_BUTTON}>
          {mutation.isPending ? "Creating…" : "Create token"}
        </button>
      </DialogActions>
    </form>
  );
}

/** A labelled field with a line of help under it, which the control names with `aria-describedby={`${id}-help`}`. */
function HelpedField({ id, label, help, children }: { id: string; label: string; help: React.ReactNode; children: React.ReactNode }) {
  return (
    <div>
      <label htmlFor={id} className={LABEL}>
        {label}
      </label>
      {children}
      <p id={`${id}-help`} className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
        {help}
      </p>
    </div>
  );
}

function CheckboxGroup({ legend, children }: { legend: string; children: React.ReactNode }) {
  return (
    <fieldset>
      <legend className={LABEL}>{legend}</legend>
      <div className="mt-1 flex flex-wrap gap-x-4 gap-y-1">{children}</div>
    </fieldset>
  );
}
