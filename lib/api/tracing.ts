/**
 * Server spans for the lock API, through @opentelemetry/api only (no-op without an SDK): each
 * request continues the trace its caller sent (W3C `traceparent`, through the registered
 * propagator) in a `METHOD /route` span, and the route's handler runs inside that span, so the
 * store calls it makes (instrumentStore's `lease.*` spans) join the caller's trace.
 *
 * The handler is wrapped rather than the context entered in a hook: Fastify reads the body from
 * stream events, which do not carry the async context a hook set.
 */
import { context, propagation, SpanKind, SpanStatusCode, trace, type Context, type Span } from "@opentelemetry/api";
import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from "fastify";

export const API_INSTRUMENTATION_SCOPE = "@leasewatch/api";

interface TracedRequest {
  span: Span;
  context: Context;
}

/** Adds the hooks; call before any route is declared (onRoute sees only later routes). */
export function traceRequests(app: FastifyInstance): void {
  const traced = new WeakMap<FastifyRequest, TracedRequest>();
  const tracer = trace.getTracer(API_INSTRUMENTATION_SCOPE);

  app.addHook("onRequest", (request, _reply, done) => {
    const route = request.routeOptions.url;
    const parent = propagation.extract(context.active(), request.headers);
    const span = tracer.startSpan(
      route ? `${request.method} ${route}` : request.method,
      { kind: SpanKind.SERVER, attributes: { "http.request.method": request.method, ...(route ? { "http.route": route } : {}) } },
      parent,
    );
    traced.set(request, { span, context: trace.setSpan(parent, span) });
    done();
  });

  app.addHook("onResponse", (request, reply, done) => {
    const entry = traced.get(request);
    if (entry) {
      entry.span.setAttribute("http.response.status_code", reply.statusCode);
      if (reply.statusCode >= 500) entry.span.setStatus({ code: SpanStatusCode.ERROR });
      entry.span.end();
    }
    done();
  });

  app.addHook("onRequestAbort", (request, done) => {
    const entry = traced.get(request);
    if (entry) {
      entry.span.setStatus({ code: SpanStatusCode.ERROR, message: "client closed the request" });
      entry.span.end();
    }
    done();
  });

  app.addHook("onRoute", (route) => {
    const handler = route.handler as RouteHandlerMethod;
    route.handler = function tracedHandler(this: FastifyInstance, request, reply) {
      const entry = traced.get(request);
      return entry ? context.with(entry.context, () => handler.call(this, request, reply)) : handler.call(this, request, reply);
    };
  });
}
