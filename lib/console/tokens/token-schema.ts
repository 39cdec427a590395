/**
 * What the API token routes accept (zod), server side. The answers' types and
 * the limits the form shares are in api-token-types.ts, which stays free of zod
 * so the browser bundle never carries it.
 */
import { z } from "zod";
import { API_ACTIONS, ZTenantPrefix, type TNewToken } from "@/lib/api/tokens";
import type { FieldIssue } from "@/lib/console/shared/refusal-types";
import { API_TOKEN_ACTIONS, MAX_TOKEN_DAYS, MAX_TOKEN_PREFIXES, type ApiTokenAction } from "./token-types";

export * from "./token-types";

// The form's list and the API's list are one list: a compile error if they ever differ.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const ACTIONS_AGREE: Same<ApiTokenAction, (typeof API_ACTIONS)[number]> = true;
void ACTIONS_AGREE;

const unique = (values: readonly string[]) => new Set(values).size === values.length;

/** The create form. Stores are checked against the configured ones by the route (they are configuration, not schema). */
export const ZCreateTokenForm = z.strictObject({
  name: z
    .string({ error: "name is required" })
    .trim()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, { error: "name must be 1-64 characters of A-Z, a-z, 0-9, '.', '_' or '-'" }),
  prefixes: z
    .array(ZTenantPrefix.describe("prefix"), { error: "prefixes must be a list" })
    .min(1, { error: "give at least one tenant prefix, e.g. tenant_123:" })
    .max(MAX_TOKEN_PREFIXES, { error: `at most ${MAX_TOKEN_PREFIXES} prefixes` })
    .refine(unique, { error: "a prefix is listed twice" }),
  stores: z
    .array(z.string().max(64), { error: "stores must be a list" })
    .min(1, { error: "choose at least one store" })
    .max(32)
    .refine(unique, { error: "a store is listed twice" }),
  actions: z
    .array(z.enum(API_TOKEN_ACTIONS, { error: `actions must be among ${API_TOKEN_ACTIONS.join(", ")}` }), { error: "actions must be a list" })
    .min(1, { error: "choose at least one action" })
    .refine(unique, { error: "an action is listed twice" }),
  expiresInDays: z
    .number({ error: "expiresInDays must be a number of days" })
    .int({ error: "expiresInDays must be whole days" })
    .min(1, { error: "a token must live at least 1 day" })
    .max(MAX_TOKEN_DAYS, { error: `a token may live at most ${MAX_TOKEN_DAYS} days; create a new one to rotate` }),
}, { error: (issue) => (issue.code === "invalid_type" ? "the body must be a JSON object: { name, prefixes, stores, actions, expiresInDays }" : undefined) });
export type TCreateTokenForm = z.infer<typeof ZCreateTokenForm>;

/** Revoke: the token's id (the dialog's confirm step is the browser's; the server needs only which token). */
export const ZRevokeTokenForm = z.strictObject({
  id: z.uuid({ error: "id must be a token id (a UUID)" }),
});
export type TRevokeTokenForm = z.infer<typeof ZRevokeTokenForm>;

const DAY_MS = 86_400_000;

export type ParsedCreateForm = { ok: true; token: Omit<TNewToken, "createdBy"> } | { ok: false; issues: FieldIssue[] };

/** The create form → the token to store, or the field issues to show. Pure: the route passes the configured stores and the time. */
export function parseCreateTokenForm(body: unknown, storeNames: readonly string[], nowMs: number): ParsedCreateForm {
  const parsed = ZCreateTokenForm.safeParse(body);
  if (!parsed.success) {
    return { ok: false, issues: parsed.error.issues.slice(0, 10).map((i) => ({ field: i.path.map(String).join(".") || "body", message: i.message })) };
  }
  const form = parsed.data;
  const unknown = form.stores.filter((s) => !storeNames.includes(s));
  if (unknown.length > 0) {
    return { ok: false, issues: [{ field: "stores", message: `this console has no store called ${unknown.map((s) => `"${s}"`).join(", ")} (it has ${storeNames.join(", ")})` }] };
  }
  return {
    ok: true,
    token: { name: form.name, prefixes: form.prefixes, stores: form.stores, actions: form.actions, expiresAt: new Date(nowMs + form.expiresInDays * DAY_MS) },
  };
}
