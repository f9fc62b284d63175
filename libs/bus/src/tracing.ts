import {
  context as otelContext,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { MsgHdrs } from '@nats-io/nats-core';
import { H } from './headers';
import { childTraceparent, newTraceparent } from './trace';

// No OpenTelemetry instrumentation for NATS exists, so the bus carries W3C trace context in
// message headers by hand. The W3C propagator is used directly (not the global one), so the
// traceparent travels whether or not an SDK is registered in this process.
const w3c = new W3CTraceContextPropagator();
const tracer = trace.getTracer('@askbus/bus');

const carrierFromTraceparent = (traceparent: string): Record<string, string> => ({ traceparent });
const recordGetter: TextMapGetter<Record<string, string>> = {
  keys: (c) => Object.keys(c),
  get: (c, k) => c[k],
};
const headerSetter: TextMapSetter<MsgHdrs> = { set: (h, k, v) => h.set(k, v) };
const headerGetter: TextMapGetter<MsgHdrs | undefined> = {
  keys: (h) => (h ? h.keys() : []),
  get: (h, k) => h?.get(k) || undefined,
};

/** The traceparent a span stands for, or undefined when it carries no valid context. */
function traceparentOf(span: Span): string | undefined {
  const carrier: Record<string, string> = {};
  w3c.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, {
    set: (c, k, v) => (c[k] = v),
  });
  return carrier.traceparent;
}

export interface CallSpan {
  span: Span;
  /** Sets traceparent (and tracestate) on the outgoing request's headers. */
  inject(h: MsgHdrs): void;
  end(error?: { code: string; message: string }): void;
}

/**
 * A client span for one call. Its parent is the caller's `traceparent`, else the active span
 * (an HTTP request in the gateway). Without a recording SDK the span is a no-op; the request
 * then still gets a traceparent of the same trace with a fresh span id.
 */
export function startCallSpan(subject: string, queryId: string, parentTraceparent?: string): CallSpan {
  const parent = parentTraceparent
    ? w3c.extract(otelContext.active(), carrierFromTraceparent(parentTraceparent), recordGetter)
    : otelContext.active();
  const span = tracer.startSpan(
    `send ${subject}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'messaging.system': 'nats',
        'messaging.destination.name': subject,
        'messaging.operation.type': 'send',
        'askbus.query_id': queryId,
      },
    },
    parent,
  );
  const recorded = span.isRecording() ? traceparentOf(span) : undefined;
  const fallback = childTraceparent(parentTraceparent ?? traceparentOf(trace.getSpan(parent) ?? span));
  return {
    span,
    inject: (h) => {
      if (recorded) w3c.inject(trace.setSpan(ROOT_CONTEXT, span), h, headerSetter);
      else h.set(H.traceparent, fallback);
    },
    end: (error) => endSpan(span, error),
  };
}

export interface HandlerSpan {
  span: Span;
  /** The context handlers run in, so spans they start (LLM calls, HTTP) become children. */
  context: Context;
  /** The traceparent onward calls of this handler descend from. */
  traceparent: string;
  end(error?: { code: string; message: string }): void;
}

/** A server span for one handled request, child of the caller's span from the headers. */
export function startHandlerSpan(subject: string, queryId: string, h: MsgHdrs | undefined): HandlerSpan {
  // No span of this process is the parent, only the caller's; other context values (such as
  // which service of a shared process handles it) carry on.
  const parent = w3c.extract(trace.deleteSpan(otelContext.active()), h, headerGetter);
  const span = tracer.startSpan(
    `process ${subject}`,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'messaging.system': 'nats',
        'messaging.destination.name': subject,
        'messaging.operation.type': 'process',
        'askbus.query_id': queryId,
      },
    },
    parent,
  );
  const ctx = trace.setSpan(parent, span);
  const incoming = h?.get(H.traceparent) || undefined;
  const traceparent = (span.isRecording() ? traceparentOf(span) : incoming) ?? newTraceparent();
  return { span, context: ctx, traceparent, end: (error) => endSpan(span, error) };
}

function endSpan(span: Span, error?: { code: string; message: string }): void {
  if (error) {
    span.setAttribute('askbus.error_code', error.code);
    // A cancel is how early termination works, not a failure: marked as such, not as an error.
    if (error.code !== 'cancelled') span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    else {
      span.setAttribute('askbus.cancelled', true);
      span.addEvent('cancelled');
    }
  }
  span.end();
}

/** Runs `fn` with `ctx` active, so the OpenTelemetry API sees the handler's span. */
export const withContext = <T>(ctx: Context, fn: () => T): T => otelContext.with(ctx, fn);
