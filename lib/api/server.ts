/**
 * The lock API: a lean Fastify server over the lease library (no Next.js on the
 * workers' hot path). Layers: this file maps HTTP to lease operations; tokens.ts
 * authenticates; scope.ts decides what a token may see; limits.ts rations it.
 */
import { createHmac, randomUUID } from "node:crypto";
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from "fastify";
import { Counter, Histogram, Registry } from "prom-client";
import type { z } from "zod";
import type { TrustProxy } from "@/lib/auth/client-address";
import { FailureLimiter } from "@/lib/auth/failure-limiter";
import { isSameToken } from "@/lib/server/metrics-token";
import { instrumentStore, type Lease, LeaseError, type LeaseStore, type LockStore } from "@leasewatch/lease";
import { loggerOptions } from "@/lib/log/logger";
import { computeBackoffDelay, DEFAULT_BACKOFF } from "@leasewatch/lease/internal";
import { HandleCodec } from "./handle";
import { acquireBodyFastPath } from "./body-fast-path";
import { TokenLimiter } from "./limits";
import { traceRequests } from "./tracing";
import { buildOpenApiDocument } from "./openapi";
import { ApiProblem, notFound, problemBody } from "./problem";
import {
  ZAcquireBody,
  ZFencingReportBody,
  ZHandleParams,
  ZListQuery,
  ZRenewBody,
  ZResourceParams,
  ZStoreQuery,
  type TAcquireBody,
} from "./schemas";
import { canSeeResource, chooseStore, requireAction, resolveListPrefix } from "./scope";
import type { ApiToken, TokenStore } from "./tokens";

export const BODY_LIMIT_BYTES = 16 * 1024;
export const DEFAULT_STORE_TIMEOUT_MS = 2_000;
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,128}$/;
/** Idempotency-Keys this process remembers (the oldest are forgotten first), to refuse one reused with another body. */
const RECENT_IDEMPOTENCY_KEYS = 10_000;

/**
 * The lease id a keyed acquire asks the store for: the same on every replica (they share the
 * handle key) for the same token, key and request, so the store recognises a retry wherever it
 * lands (AcquireInput.leaseId). A UUID (version 8: custom) from an HMAC, so no client can compute
 * another token's ids.
 */
export function idempotentLeaseId(key: Buffer, tokenId: string, idempotencyKey: string, request: string): string {
  const bytes = createHmac("sha256", key).update(`leasewatch.idempotency.v1\n${tokenId}\n${idempotencyKey}\n${request}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export interface ApiServerOptions {
  stores: ReadonlyMap<string, LeaseStore>;
  tokens: TokenStore;
  /** HMAC key for lease handles (≥ 32 bytes); replicas must share it. */
  handleKey: Buffer;
  storeTimeoutMs?: number;
  /** pino options (default: the shared ones of lib/log/logger.ts at info), or false for no logs (tests). */
  logger?: FastifyServerOptions["logger"];
  /** Which peers' X-Forwarded-For is believed (TRUSTED_PROXY, lib/auth/client-address.ts); none by default. */
  trustProxy?: TrustProxy;
  /** What a Prometheus scrape of /metrics sends as its bearer (METRICS_TOKEN); unset, /metrics is refused. */
  metricsToken?: string | null;
}

/** Requests without a valid token (none, unknown, revoked, expired) allowed per client address per window. */
export const AUTH_FAILURE_LIMIT = { windowMs: 60_000, maxFailures: 30 };

declare module "fastify" {
  interface FastifyRequest {
    apiToken: ApiToken | null;
    leaveSlot: (() => void) | null;
    /** The client closed the connection before its answer was sent. */
    isClientGone: boolean;
  }
}

/**
 * Store calls never hang a request: past the timeout the client gets a 503 (the call may still land; a lease taken then simply expires).
 * One promise and one timer per call (not a race of two promises and a finally: this runs twice per lock).
 */
function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new ApiProblem("store-unavailable", `The store did not answer ${what} within ${ms} ms; retry later.`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

function parse<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.length ? `${issue.path.join(".")}: ` : "";
  throw new ApiProblem("invalid-request", `Invalid ${where}: ${path}${issue?.message ?? "unknown problem"}.`);
}

function lockView(lease: Lease) {
  return {
    store: lease.store,
    resource: lease.resource,
    owner: lease.owner,
    task: lease.task,
    fencingToken: lease.fencingToken,
    acquiredAt: lease.acquiredAt.toISOString(),
    expiresAt: lease.expiresAt.toISOString(),
    ttlMs: lease.ttlMs,
  };
}

/**
 * Who acted, recorded on the lease itself: the library's acquire stores owner and task
 * only (changing the hot path for an extra column was out of scope), so the API records
 * the owner as `token:<name>/<ownerId>`. Events then carry the token in `owner`, and the
 * console's owner filter finds a token's leases. The task is stored untouched.
 */
export function recordedOwner(token: ApiToken, ownerId: string): string {
  return `token:${token.name}/${ownerId}`;
}

type AcquireReply = Record<string, unknown>;

/**
 * One line per request, with its id (the logger's reqId). Answers a client or the server
 * got wrong (4xx, 5xx) are logged at info; successful ones at debug, since at info a line
 * per lock call costs more than the call. The path is logged only up to 256 characters; a failed
 * request's headers are logged too, with credentials redacted (lib/log/logger.ts).
 */
function logCompletion(request: FastifyRequest, status: number, route: string, elapsedMs: number): void {
  const isFailure = status >= 400;
  // pino has isLevelEnabled; the no-op logger (logger: false) does not, and logs nothing anyway.
  if (!isFailure && !(request.log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.("debug")) return;
  const line = { method: request.method, route, url: request.url.length <= 256 ? request.url : undefined, statusCode: status, responseTimeMs: Math.round(elapsedMs * 1000) / 1000 };
  if (isFailure) request.log.info({ ...line, headers: request.headers }, "request failed");
  else request.log.debug(line, "request completed");
}

export function buildApiServer(options: ApiServerOptions): FastifyInstance {
  const storeTimeoutMs = options.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
  const limiter = new TokenLimiter();
  // Per client address: each made-up bearer costs a database lookup.
  const authFailures = new FailureLimiter(Date.now, AUTH_FAILURE_LIMIT);
  const handles = new HandleCodec(options.handleKey);
  // Recent keyed acquires by (token, Idempotency-Key), bounded: the request each key was first
  // sent with, and the answer while it is in flight (a retry then waits for it). Repeats after
  // that are answered by the store, on any replica.
  const idempotent = new Map<string, { sent: string; inFlight: Promise<AcquireReply> | null }>();
  let closing = false;

  const metrics = new Registry();
  const requests = new Counter({ name: "leasewatch_api_requests_total", help: "API requests by route and status", labelNames: ["method", "route", "status"], registers: [metrics] });
  const duration = new Histogram({
    name: "leasewatch_api_request_duration_seconds",
    help: "API request duration by route",
    labelNames: ["method", "route"],
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30],
    registers: [metrics],
  });

  const app = Fastify({
    logger: options.logger ?? loggerOptions("api"),
    bodyLimit: BODY_LIMIT_BYTES,
    // Handles and resources (≤ 512 bytes, percent-encoded) are longer than the default 100.
    routerOptions: { maxParamLength: 8192 },
    requestIdHeader: "x-request-id",
    genReqId: () => randomUUID(),
    // Fastify's own two lines per request (at info) cost more CPU than the lease call
    // itself; onResponse below writes one line, at debug unless the request failed.
    logController: new LogController({ disableRequestLogging: true }),
    connectionTimeout: 60_000,
    requestTimeout: 45_000,
    return503OnClosing: true,
    // request.ip: the socket's address, or the client a trusted proxy reports (the console's rule too).
    trustProxy: options.trustProxy ?? false,
  });

  // Declared up front, so every request object has one shape.
  app.decorateRequest("apiToken", null);
  app.decorateRequest("leaveSlot", null);
  app.decorateRequest("isClientGone", false);
  traceRequests(app);
  // Store calls become `lease.*` spans under the request's span (no-op without an SDK).
  const stores: ReadonlyMap<string, LeaseStore> = new Map([...options.stores].map(([name, store]) => [name, instrumentStore(store)]));

  const call = <T>(promise: Promise<T>, what: string) => withTimeout(promise, storeTimeoutMs, what);

  function storeFor(token: ApiToken, name: string | undefined): LeaseStore {
    const chosen = chooseStore(token, name);
    const store = chosen ? stores.get(chosen) : undefined;
    if (!store) throw notFound();
    return store;
  }

  app.addContentTypeParser("application/problem+json", { parseAs: "string" }, (_req, body, done) => done(null, body));

  app.setErrorHandler((error: unknown, request, reply) => {
    let problem: ApiProblem;
    if (error instanceof ApiProblem) problem = error;
    else if (error instanceof LeaseError) problem = new ApiProblem("invalid-request", `${error.message}.`);
    else {
      const e = error as { statusCode?: number; code?: string; message?: string };
      if (e.code === "FST_ERR_CTP_BODY_TOO_LARGE") problem = new ApiProblem("payload-too-large", `Send at most ${BODY_LIMIT_BYTES} bytes.`);
      else if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) problem = new ApiProblem("invalid-request", `The request could not be read: ${e.message ?? "bad request"}.`);
      else {
        request.log.error({ err: error }, "unhandled error");
        problem = new ApiProblem("internal", `Something failed on the server; quote request id ${request.id}.`);
      }
    }
    if (problem.extra.retryAfterS !== undefined) void reply.header("retry-after", String(problem.extra.retryAfterS));
    return reply.code(problem.status).type("application/problem+json").send(problemBody(problem, request.url.length <= 256 ? request.url : undefined));
  });

  app.setNotFoundHandler((request, reply) => {
    const problem = notFound();
    return reply.code(404).type("application/problem+json").send(problemBody(problem));
  });

  // The labelled children, looked up once per method, route and status (few: the routes are ours, the methods Node's).
  const requestsBy = new Map<string, Counter.Internal>();
  const durationBy = new Map<string, Histogram.Internal<"method" | "route">>();
  app.addHook("onResponse", (request, reply, done) => {
    request.leaveSlot?.();
    const route = request.routeOptions.url ?? "unmatched";
    const status = reply.statusCode;
    const routeKey = `${request.method} ${route}`;
    const statusKey = `${routeKey} ${status}`;
    let counted = requestsBy.get(statusKey);
    if (!counted) requestsBy.set(statusKey, (counted = requests.labels({ method: request.method, route, status: String(status) })));
    counted.inc();
    let timed = durationBy.get(routeKey);
    if (!timed) durationBy.set(routeKey, (timed = duration.labels({ method: request.method, route })));
    timed.observe(reply.elapsedTime / 1000);
    logCompletion(request, status, route, reply.elapsedTime);
    done();
  });

  /**
   * Authentication, then the token's rate and concurrency limits, on every /v1 route but the document.
   * A callback hook rather than an async one: with the token cached (the usual case) nothing here waits,
   * and the request goes on without a promise; only a lookup in the database is awaited.
   */
  function authenticate(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
    const header = request.headers.authorization;
    const bearer = header?.startsWith("Bearer ") ? header.slice(7).trim() : undefined;
    const cached = bearer ? options.tokens.authenticateCached(bearer) : null;
    // A live token is never held up by failures from its address.
    if (cached) return done(admit(request, reply, cached));
    const tooMany = tooManyFailures(request);
    if (tooMany) return done(tooMany);
    if (!bearer) return done(refuse(request, "Send Authorization: Bearer <token> (create one in the console under /tokens)."));
    if (cached === null) return done(refuse(request, "The token is unknown, revoked or expired."));
    call(options.tokens.authenticate(bearer), "the token lookup")
      .then((token) => (token ? admit(request, reply, token) : refuse(request, "The token is unknown, revoked or expired.")))
      .then(
        (problem) => done(problem),
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
      );
  }

  function tooManyFailures(request: FastifyRequest): ApiProblem | undefined {
    const retryAfterS = authFailures.retryAfterS(request.ip);
    if (retryAfterS === 0) return undefined;
    return new ApiProblem("rate-limited", `Too many requests without a valid token from your address; retry in ${retryAfterS} s with a valid token.`, { retryAfterS });
  }

  function refuse(request: FastifyRequest, why: string): ApiProblem {
    authFailures.recordFailure(request.ip);
    return new ApiProblem("unauthorized", why);
  }

  /** Lets the token's request in (the answer is undefined) or says why not. */
  function admit(request: FastifyRequest, reply: FastifyReply, token: ApiToken): ApiProblem | undefined {
    const rate = limiter.take(token.id, token.ratePerSec);
    if (!rate.ok) return new ApiProblem("rate-limited", `This token is limited to ${token.ratePerSec} requests per second.`, { retryAfterS: rate.retryAfterS });
    const leave = limiter.enter(token.id, token.maxConcurrent);
    if (!leave) return new ApiProblem("rate-limited", `This token may have at most ${token.maxConcurrent} requests in flight.`, { retryAfterS: 1 });
    request.leaveSlot = leave;
    // 'close' also fires when the client went away before an answer (onResponse may then never run);
    // one listener for the slot and for a waiting acquire, which stops waiting for a client that is gone.
    reply.raw.on("close", () => {
      leave();
      if (!reply.raw.writableFinished) request.isClientGone = true;
    });
    request.apiToken = token;
    return undefined;
  }
  const tokenOf = (request: FastifyRequest): ApiToken => {
    if (!request.apiToken) throw new ApiProblem("unauthorized", "Send Authorization: Bearer <token>.");
    return request.apiToken;
  };

  // /livez is the probe name the console and the sweeper share; /healthz stays for existing probes.
  const live = async () => ({ ok: true });
  app.get("/livez", live);
  app.get("/healthz", live);
  app.get("/readyz", async (_request, reply) => {
    const checks = await Promise.all(
      [...stores.values()].map(async (store) => {
        const health = await withTimeout(store.health(), storeTimeoutMs, "health").catch(() => ({ ok: false }));
        return [store.name, health.ok] as const;
      }),
    );
    const tokensOk = await withTimeout(options.tokens.health(), storeTimeoutMs, "health").catch(() => false);
    const ready = !closing && tokensOk && checks.every(([, ok]) => ok);
    return reply.code(ready ? 200 : 503).send({ ready, tokens: tokensOk, stores: Object.fromEntries(checks) });
  });
  app.get("/metrics", async (request, reply) => {
    const header = request.headers.authorization;
    const bearer = header?.startsWith("Bearer ") ? header.slice(7).trim() : "";
    // The right token always gets in; wrong ones count against the address like unknown API tokens.
    if (!options.metricsToken || !isSameToken(bearer, options.metricsToken)) {
      const tooMany = tooManyFailures(request);
      if (tooMany) throw tooMany;
      throw refuse(request, "Scrape /metrics with Authorization: Bearer <METRICS_TOKEN>; set METRICS_TOKEN on the API server (32-256 characters).");
    }
    return reply.type(metrics.contentType).send(await metrics.metrics());
  });
  const openApi = buildOpenApiDocument();
  app.get("/v1/openapi.json", async () => openApi);

  app.register(async (v1) => {
    v1.addHook("onRequest", authenticate);

    v1.post("/v1/locks/acquire", async (request) => {
      const token = tokenOf(request);
      requireAction(token, "acquire");
      const body = acquireBodyFastPath(request.body) ?? parse(ZAcquireBody, request.body, "acquire request");
      const key = request.headers["idempotency-key"];
      if (key === undefined) return acquire(token, body, request);
      if (typeof key !== "string" || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
        throw new ApiProblem("invalid-request", "Idempotency-Key must be 1-128 printable ASCII characters.");
      }
      const store = storeFor(token, body.store);
      const ttlMs = body.ttlMs ?? Math.round((body.ttlSeconds ?? 0) * 1000);
      const sent = JSON.stringify([store.name, body.resource, body.ownerId, body.task, ttlMs]);
      const mapKey = `${token.id}\n${key}`;
      const previous = idempotent.get(mapKey);
      if (previous && previous.sent !== sent) throw new ApiProblem("idempotency-conflict", "This Idempotency-Key was sent with a different body; use a new key.");
      if (previous?.inFlight) return previous.inFlight;
      const result = acquire(token, body, request, idempotentLeaseId(options.handleKey, token.id, key, sent));
      const entry = { sent, inFlight: result as Promise<AcquireReply> | null };
      idempotent.delete(mapKey);
      if (idempotent.size >= RECENT_IDEMPOTENCY_KEYS) idempotent.delete(idempotent.keys().next().value!);
      idempotent.set(mapKey, entry);
      const settled = () => {
        entry.inFlight = null;
      };
      result.then(settled, settled);
      return result;
    });

    /** `leaseId`: the id a keyed acquire asks for (idempotentLeaseId); the store answers its repeats. */
    async function acquire(token: ApiToken, body: TAcquireBody, request: FastifyRequest, leaseId?: string): Promise<AcquireReply> {
      const store: LockStore = storeFor(token, body.store);
      if (!canSeeResource(token, body.resource)) throw notFound();
      const ttlMs = body.ttlMs ?? Math.round((body.ttlSeconds ?? 0) * 1000);
      const owner = recordedOwner(token, body.ownerId);
      const deadline = performance.now() + (body.waitMs ?? 0);
      // A client that goes away cancels its wait: the response closing before it was sent means the socket closed
      // (the listener is authenticate's); the socket may also have closed before that listener was attached.
      const isGone = () => request.isClientGone || request.raw.socket.destroyed;
      for (let attempt = 0; ; attempt++) {
        const result = await call(store.acquire({ resource: body.resource, owner, task: body.task, ttlMs, ...(leaseId ? { leaseId } : {}) }), "the acquire").catch((error: unknown) => {
          if (error instanceof LeaseError && error.code === "lease_ended") {
            // Without a key the store chose the lease id: its own resend after a lost reply found
            // the lease it granted lapsed. Not acquired, holder unknown: wait and try again.
            if (!leaseId) return null;
            throw new ApiProblem("lease-not-held", "The lease this Idempotency-Key acquired has ended (released or expired); send a new key to acquire again.");
          }
          throw error;
        });
        if (result?.acquired) {
          const lease = result.lease;
          if (!leaseId && isGone()) {
            // The client went away while this attempt was out, so nobody can ever hold this lease: it goes
            // back now rather than at its TTL. A keyed acquire keeps it, for the client's resend with the key.
            await call(store.release({ resource: lease.resource, leaseId: lease.leaseId }), "the release").catch((error: unknown) => {
              request.log.warn({ err: error }, "client disconnected; the lease it was granted meanwhile could not be released");
            });
            request.log.info("client disconnected; the lease it was granted meanwhile was released");
            return { acquired: false };
          }
          return {
            acquired: true,
            leaseId: handles.encode({ store: store.name, resource: lease.resource, leaseId: lease.leaseId, ttlMs, tokenId: token.id }),
            store: store.name,
            resource: lease.resource,
            fencingToken: lease.fencingToken,
            expiresAt: lease.expiresAt.toISOString(),
            ttlMs: lease.ttlMs,
          };
        }
        const remaining = deadline - performance.now();
        if (remaining <= 0 || isGone() || closing) {
          if (!result) return { acquired: false };
          return { acquired: false, holder: { owner: result.holder.owner, task: result.holder.task, expiresAt: result.holder.expiresAt.toISOString() } };
        }
        await new Promise((resolve) => setTimeout(resolve, computeBackoffDelay(DEFAULT_BACKOFF, attempt, remaining, Math.random)));
        if (isGone()) {
          request.log.info("client disconnected; wait cancelled");
          return { acquired: false };
        }
      }
    }

    /** The handle's lease, if the handle is authentic, was issued to this token and is inside its tenant; otherwise 404. */
    function leaseFromHandle(token: ApiToken, raw: unknown): { handle: string; payload: NonNullable<ReturnType<typeof handles.decode>>; store: LockStore } {
      // The schema's rule for a handle (1-4096 characters), checked without it when it holds.
      const handle = typeof raw === "string" && raw.length >= 1 && raw.length <= 4096 ? raw : parse(ZHandleParams, { leaseId: raw }, "lease handle").leaseId;
      const payload = handles.decode(handle);
      // Only the token that acquired the lease may use its handle; to any other it is unknown.
      if (!payload || payload.tokenId !== token.id || !canSeeResource(token, payload.resource) || !token.stores.includes(payload.store)) throw notFound();
      const store = stores.get(payload.store);
      if (!store) throw notFound();
      return { handle, payload, store };
    }

    v1.post("/v1/locks/:leaseId/renew", async (request) => {
      const token = tokenOf(request);
      requireAction(token, "renew");
      const { handle, payload, store } = leaseFromHandle(token, (request.params as { leaseId?: unknown }).leaseId);
      const body = parse(ZRenewBody, request.body, "renew request");
      const ttlMs = body.ttlMs ?? (body.ttlSeconds !== undefined ? Math.round(body.ttlSeconds * 1000) : payload.ttlMs);
      const result = await call(store.renew({ resource: payload.resource, leaseId: payload.leaseId, ttlMs }), "the renew");
      if (!result.renewed) {
        handles.forget(handle);
        throw new ApiProblem("lease-not-held", `The lease is no longer held (${result.reason}); stop the work it protects.`, { fields: { reason: result.reason } });
      }
      return { renewed: true, expiresAt: result.expiresAt.toISOString(), ttlMs, renewals: result.renewals };
    });

    v1.delete("/v1/locks/:leaseId", async (request) => {
      const token = tokenOf(request);
      requireAction(token, "release");
      const { handle, payload, store } = leaseFromHandle(token, (request.params as { leaseId?: unknown }).leaseId);
      const result = await call(store.release({ resource: payload.resource, leaseId: payload.leaseId }), "the release");
      handles.forget(handle);
      if (!result.released) {
        throw new ApiProblem("lease-not-held", `The lease is no longer held (${result.reason}); nothing was released.`, { fields: { reason: result.reason } });
      }
      return { released: true, holdMs: result.holdMs };
    });

    v1.post("/v1/fencing/rejections", async (request) => {
      const token = tokenOf(request);
      requireAction(token, "report");
      const body = parse(ZFencingReportBody, request.body, "fencing rejection");
      const store: LockStore = storeFor(token, body.store);
      if (!canSeeResource(token, body.resource)) throw notFound();
      const event = await call(
        store.reportFencingRejection({ resource: body.resource, fencingToken: body.fencingToken, seenToken: body.seenToken, by: `token:${token.name}/${body.by}`.slice(0, 256) }),
        "the report",
      );
      return { recorded: true, eventId: event.id };
    });

    v1.get("/v1/locks", async (request) => {
      const token = tokenOf(request);
      requireAction(token, "read");
      const query = parse(ZListQuery, request.query, "query");
      const store = storeFor(token, query.store);
      const prefix = resolveListPrefix(token, query.prefix);
      const page = await call(store.list({ prefix, limit: query.limit ?? 100, ...(query.cursor ? { cursor: query.cursor } : {}) }), "the list");
      return {
        // The library's prefix filter is trusted, and re-checked: nothing outside the tenant is ever serialised.
        items: page.items.filter((l) => canSeeResource(token, l.resource)).map(lockView),
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
      };
    });

    v1.get("/v1/locks/:leaseId", async (request) => {
      const token = tokenOf(request);
      requireAction(token, "read");
      const { resource } = parse(ZResourceParams, { resource: (request.params as { leaseId?: unknown }).leaseId }, "resource");
      const query = parse(ZStoreQuery, request.query, "query");
      const store: LockStore = storeFor(token, query.store);
      if (!canSeeResource(token, resource)) throw notFound();
      const lease = await call(store.get(resource), "the read");
      // Same answer as outside the tenant: "not held" and "not yours" must look alike.
      if (!lease) throw notFound();
      return lockView(lease);
    });
  });

  // Before the listener closes: waiting acquires stop waiting and answer, so in-flight requests finish promptly.
  app.addHook("preClose", async () => {
    closing = true;
  });

  return app;
}
