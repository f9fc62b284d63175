import { context, trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export interface Telemetry {
  /** True when spans are recorded and exported. */
  enabled: boolean;
  /** Flushes what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry for a service when the standard variables ask for it: an OTLP endpoint
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER.
 * Everything else (protocol, headers, sampler, resource attributes) is read by the SDK from the
 * OTEL_* variables. OTEL_SDK_DISABLED=true turns it off. Without any of them nothing is exported,
 * so a laptop run does not try to reach a collector that is not there.
 */
export function startTelemetry(service: string, env: NodeJS.ProcessEnv = process.env): Telemetry {
  if (!tracingWanted(env)) return { enabled: false, shutdown: async () => undefined };
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME || `askbus-${service}`,
    // The bus and Fastify are instrumented explicitly; no monkey-patching of other modules.
    instrumentations: [],
    // Metrics are served to Prometheus by each service; logs go to stdout through pino.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return { enabled: true, shutdown: () => sdk.shutdown() };
}

/** Whether the standard variables ask for traces to be exported (see startTelemetry). */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  return (
    env.OTEL_SDK_DISABLED !== 'true' &&
    Boolean(
      env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_TRACES_EXPORTER,
    )
  );
}

/** Adds the active span's ids to every log line, so logs and traces join up. */
export function traceFields(): Record<string, string> {
  const span = trace.getSpan(context.active());
  const ctx = span?.spanContext();
  if (!ctx || !trace.isSpanContextValid(ctx)) return {};
  return { trace_id: ctx.traceId, span_id: ctx.spanId, trace_flags: `0${ctx.traceFlags.toString(16)}` };
}

/** The pino logger of a service: JSON lines with service, trace_id and span_id. */
export function createLogger(
  service: string,
  opts: LoggerOptions = {},
  destination?: DestinationStream,
): Logger {
  const options: LoggerOptions = {
    name: service,
    level: process.env.LOG_LEVEL ?? 'info',
    base: { service },
    mixin: traceFields,
    ...opts,
  };
  return destination ? pino(options, destination) : pino(options);
}
