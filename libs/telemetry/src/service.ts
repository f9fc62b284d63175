import { connectBus, onShutdown, type Bus } from '@askbus/bus';
import type { Logger } from 'pino';
import { createLogger, startTelemetry } from './otel';
import { createRegistry, instrumentBus } from './metrics';
import { startOpsServer } from './ops-server';

/**
 * The life of one service process: telemetry, logger, NATS connection, metrics and probes on
 * METRICS_PORT (default 9464; 0 picks a free port, "off" none), then `start`; on SIGTERM
 * readiness goes false, the bus drains (work in flight finishes, bounded), telemetry flushes.
 */
export async function runService(
  service: string,
  start: (bus: Bus, log: Logger) => Promise<void> | void,
): Promise<void> {
  const telemetry = startTelemetry(service);
  const log = createLogger(service);
  const bus = await connectBus({
    service,
    log: (level, msg, fields) => log[level](fields ?? {}, msg),
  });
  const registry = createRegistry();
  instrumentBus(bus, registry);
  await start(bus, log);
  const portSetting = process.env.METRICS_PORT ?? '9464';
  const ops =
    portSetting === 'off'
      ? undefined
      : await startOpsServer({
          port: Number(portSetting),
          registry,
          ready: () => !bus.draining && !bus.nc.isClosed(),
        });
  log.info({ nats: bus.nc.getServer(), opsPort: ops?.port }, `askbus ${service} serving`);
  onShutdown(async () => {
    log.info('draining');
    await bus.drain(Number(process.env.ASKBUS_DRAIN_MS ?? 10_000));
    await ops?.close();
    await telemetry.shutdown();
  });
}
