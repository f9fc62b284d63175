export { createLogger, startTelemetry, traceFields, type Telemetry } from './otel';
export { createRegistry, instrumentBus } from './metrics';
export { startOpsServer, type OpsServer } from './ops-server';
export { runService } from './service';
