/**
 * URL parameters of the TTL advice page and the renewal-slack panels: `store`,
 * `prefix` and a window (`window=15m|1h|6h|24h|7d`, or `window=custom&from=&to=`,
 * at most 7 days: the stores keep slack in hourly rollups and advice reads the
 * window's events). Other parameters (the overview's depth, …) are ignored, so
 * a panel can take its page's query string as it is.
 */
import { z } from "zod";
import { ZPrefix, ZStoreName } from "@leasewatch/lease/internal";
import { toProblemSentence, WINDOW_MS, type SearchParamsInput } from "@/lib/console/shared/params";
import { ADVICE_WINDOWS, MAX_ADVICE_SPAN_MS, type AdviceWindow } from "./advice-windows";
import type { ParamProblem } from "@/lib/console/shared/views";

export { ADVICE_WINDOWS, type AdviceWindow };

export interface AdviceParams {
  store?: string;
  prefix?: string;
  window: AdviceWindow;
  from: Date;
  to: Date;
}

const ZIsoDate = z
  .string()
  .max(40)
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?$/, { error: "must be an ISO 8601 date-time, e.g. 2026-04-01T10:00:00Z" })
  .transform((s) => new Date(/(Z|[+-]\d{2}:\d{2})$/.test(s) ? s : `${s}Z`))
  .refine((d) => !Number.isNaN(d.getTime()), { error: "is not a real date" });

const FIELDS = {
  store: ZStoreName,
  prefix: ZPrefix,
  window: z.enum(ADVICE_WINDOWS, { error: `must be one of ${ADVICE_WINDOWS.join(", ")}` }),
  from: ZIsoDate,
  to: ZIsoDate,
} as const;
type Field = keyof typeof FIELDS;

function readField<K extends Field>(input: SearchParamsInput, key: K): z.output<(typeof FIELDS)[K]> | undefined {
  const all = input instanceof URLSearchParams ? input.getAll(key) : [input[key] ?? []].flat();
  const values = all.filter((v) => v !== "");
  if (values.length === 0) return undefined;
  if (values.length > 1) throw new AdviceParamError(problem(key, "was given more than once; give it once"));
  const parsed = FIELDS[key].safeParse(values[0]);
  if (!parsed.success) throw new AdviceParamError(problem(key, parsed.error.issues[0]?.message ?? "is invalid"));
  return parsed.data as z.output<(typeof FIELDS)[K]>;
}

// Shown on its own under "Can't show TTL advice.", so a whole sentence naming the parameter, as on the other pages.
function problem(param: string, message: string): ParamProblem {
  return { param, message: toProblemSentence(param, message) };
}

class AdviceParamError extends Error {
  constructor(readonly problem: ParamProblem) {
    super(`${problem.param}: ${problem.message}`);
  }
}

export function parseAdviceParams(input: SearchParamsInput, nowMs = Date.now()): { ok: true; params: AdviceParams } | { ok: false; problem: ParamProblem } {
  try {
    const store = readField(input, "store");
    const prefix = readField(input, "prefix");
    const window = readField(input, "window");
    const from = readField(input, "from");
    const to = readField(input, "to");
    const base = { ...(store ? { store } : {}), ...(prefix ? { prefix } : {}) };
    if (window === "custom" || (window === undefined && from)) {
      if (!from) return { ok: false, problem: problem("from", "is needed for a custom window (ISO 8601, e.g. 2026-04-01T10:00:00Z)") };
      const end = to ?? new Date(nowMs);
      if (end.getTime() <= from.getTime()) return { ok: false, problem: problem("to", "must be later than from") };
      if (end.getTime() - from.getTime() > MAX_ADVICE_SPAN_MS) return { ok: false, problem: problem("from", "must be at most 7 days before to (TTL advice covers at most 7 days)") };
      return { ok: true, params: { ...base, window: "custom", from, to: end } };
    }
    const name = window ?? "1h";
    // `to` is exclusive and one past now, so the window starts one past its length ago: the
    // stores refuse a span even 1 ms over 7 days, which window=7d otherwise was.
    return { ok: true, params: { ...base, window: name, from: new Date(nowMs + 1 - WINDOW_MS[name]), to: new Date(nowMs + 1) } };
  } catch (error) {
    if (error instanceof AdviceParamError) return { ok: false, problem: error.problem };
    throw error;
  }
}
