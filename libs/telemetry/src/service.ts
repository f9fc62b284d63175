import { connectBus, onShutdown, type Bus } from '@askbus/bus';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { createLogger, startTelemetry } from './otel';
import { createRegistry, instrumentBus } from './metrics';
import { startOpsServer } from './ops-server';

/** What a service's start function gets. */
export interface ServiceContext {
  bus: Bus;
  log: Logger;
  registry: Registry;
}

/**
 * The life of one service process: telemetry, logger, NATS connection, metrics and probes on
 * METRICS_PORT (unset: none, so several services can run on one machine; 0: a free port; the
 * Kubernetes manifests set 9464), then `start`. On SIGTERM readiness goes false, `start`'s
 * returned stop function runs (the gateway closes HTTP), the bus drains (work in flight
 * finishes, bounded by ASKBUS_DRAIN_MS), telemetry flushes, the process exits.
 */
export async function runService(
  service: string,
  start: (ctx: ServiceContext) => Promise<void | (() => Promise<void>)> | void,
): Promise<void> {
  const telemetry = startTelemetry(service);
  const log = createLogger(service);
  const bus = await connectBus({
    service,
    log: (level, msg, fields) => log[level](fields ?? {}, msg),
  });
  const registry = createRegistry();
  instrumentBus(bus, registry);
  const stop = await start({ bus, log, registry });
  const portSetting = process.env.METRICS_PORT ?? '';
  const ops =
    portSetting === '' || portSetting === 'off'
      ? undefined
      : await startOpsServer({
          port: Number(portSetting),
          registry,
          ready: () => !bus.draining && !bus.nc.isClosed(),
        });
  log.info({ nats: bus.nc.getServer(), opsPort: ops?.port }, `askbus ${service} serving`);
  onShutdown(async () => {
    log.info('draining');
    await stop?.();
    await bus.drain(Number(process.env.ASKBUS_DRAIN_MS ?? 10_000));
    await ops?.close();
    await telemetry.shutdown();
  });
}
