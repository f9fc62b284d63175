export { createLogger, startTelemetry, traceFields, type Telemetry } from './otel';
export { createRegistry, instrumentBus, instrumentLlm, type LlmCounterSource } from './metrics';
export { startOpsServer, type OpsServer } from './ops-server';
export { inService, serviceOf, startSystemTelemetry } from './service-tracing';
