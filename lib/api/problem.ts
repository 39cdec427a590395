/**
 * RFC 9457 problem details. Every error the API returns has a stable `type` URI
 * (clients switch on it) and a `detail` sentence that says what to do.
 */
export const PROBLEM_BASE = "https://leasewatch.dev/problems/";

export const PROBLEMS = {
  "invalid-request": { status: 400, title: "The request is invalid" },
  unauthorized: { status: 401, title: "A valid bearer token is required" },
  forbidden: { status: 403, title: "This token may not perform this action" },
  "not-found": { status: 404, title: "Not found" },
  "lease-not-held": { status: 409, title: "The lease is no longer held" },
  "idempotency-conflict": { status: 422, title: "The Idempotency-Key was used for another request" },
  "payload-too-large": { status: 413, title: "The request body is too large" },
  "rate-limited": { status: 429, title: "Too many requests for this token" },
  "store-unavailable": { status: 503, title: "The lease store did not answer in time" },
  internal: { status: 500, title: "Internal error" },
} as const;
export type ProblemType = keyof typeof PROBLEMS;

export class ApiProblem extends Error {
  readonly status: number;
  constructor(
    readonly type: ProblemType,
    readonly detail: string,
    readonly extra: { retryAfterS?: number; fields?: Record<string, unknown> } = {},
  ) {
    super(detail);
    this.name = "ApiProblem";
    this.status = PROBLEMS[type].status;
  }
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  [extension: string]: unknown;
}

export function problemBody(problem: ApiProblem, instance?: string): ProblemBody {
  return {
    type: PROBLEM_BASE + problem.type,
    title: PROBLEMS[problem.type].title,
    status: problem.status,
    detail: problem.detail,
    ...(instance ? { instance } : {}),
    ...problem.extra.fields,
  };
}

/** The one not-found answer for anything outside a token's tenant, so existence never leaks. */
export function notFound(): ApiProblem {
  return new ApiProblem("not-found", "No such lock or lease for this token.");
}
