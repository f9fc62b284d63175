/**
 * Tracing for several services in one process (`askbus up`): each span carries the resource of
 * the service whose work made it, so a trace names the gateway, router, retriever, … even when
 * they share a process. A service's work runs inside `inService(name, …)`; async work started
 * there keeps the name (AsyncLocalStorage), and the global tracer provider picks, per span, a
 * provider whose resource has that `service.name`. Every provider feeds one batch processor.
 */
import {
  context,
  createContextKey,
  propagation,
  trace,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  processDetector,
  resourceFromAttributes,
  type Resource,
} from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { tracingWanted, type Telemetry } from './otel';

const SERVICE = createContextKey('askbus.service');

/** Runs `fn` as the work of `service`: spans started inside (and in what it starts) name it. */
export function inService<T>(service: string, fn: () => T): T {
  return context.with(context.active().setValue(SERVICE, service), fn);
}

/** The service whose work `ctx` belongs to, if any. */
export const serviceOf = (ctx: Context): string | undefined => ctx.getValue(SERVICE) as string | undefined;

/** A tracer that starts each span with the tracer of the service its context names. */
class ServiceRoutingTracer implements Tracer {
  constructor(private readonly pick: (ctx: Context) => Tracer) {}

  startSpan(name: string, options?: SpanOptions, ctx: Context = context.active()): Span {
    return this.pick(ctx).startSpan(name, options, ctx);
  }

  // (name, fn) | (name, options, fn) | (name, options, context, fn), as the API declares it.
  startActiveSpan = ((...args: unknown[]) => {
    const ctx = args.length >= 4 ? (args[2] as Context) : context.active();
    const tracer = this.pick(ctx);
    return (tracer.startActiveSpan as (...a: unknown[]) => unknown).apply(tracer, args);
  }) as Tracer['startActiveSpan'];
}

/** The span exporter the standard variables ask for (OTLP over HTTP, JSON or protobuf; console). */
function exporterFromEnv(env: NodeJS.ProcessEnv): SpanExporter | undefined {
  const kind = (env.OTEL_TRACES_EXPORTER ?? 'otlp').split(',')[0]!.trim();
  if (kind === 'none') return undefined;
  if (kind === 'console') return new ConsoleSpanExporter();
  const protocol =
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  return protocol === 'http/json' ? new OtlpJsonExporter() : new OtlpProtoExporter();
}

/**
 * Starts tracing for a process that runs several services (see inService). The same variables
 * as startTelemetry decide whether anything is exported; spans outside any service are
 * `fallbackService`'s.
 */
export function startSystemTelemetry(
  fallbackService: string,
  env: NodeJS.ProcessEnv = process.env,
): Telemetry {
  const exporter = tracingWanted(env) ? exporterFromEnv(env) : undefined;
  if (!exporter) return { enabled: false, shutdown: async () => undefined };
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  const processor = new BatchSpanProcessor(exporter);
  const base: Resource = defaultResource().merge(
    detectResources({ detectors: [envDetector, hostDetector, processDetector] }),
  );
  const providers = new Map<string, BasicTracerProvider>();
  const providerOf = (service: string): BasicTracerProvider => {
    let p = providers.get(service);
    if (!p) {
      const name = `askbus-${service}`;
      p = new BasicTracerProvider({
        resource: base.merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: name })),
        spanProcessors: [processor],
      });
      providers.set(service, p);
    }
    return p;
  };
  const routing: TracerProvider = {
    getTracer: (name, version, options) =>
      new ServiceRoutingTracer((ctx) =>
        providerOf(serviceOf(ctx) ?? fallbackService).getTracer(name, version, options),
      ),
  };
  trace.setGlobalTracerProvider(routing);
  return {
    enabled: true,
    shutdown: async () => {
      await processor.forceFlush();
      await processor.shutdown();
      trace.disable();
    },
  };
}
