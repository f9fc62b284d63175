import { connectBus, onShutdown } from '@askbus/bus';
import {
  createLogger,
  createRegistry,
  instrumentBus,
  instrumentLlm,
  startOpsServer,
  startTelemetry,
} from '@askbus/telemetry';
import { readConfig, ServiceConfigError } from './config';
import type { ServiceDeclaration } from './declare';

/**
 * The life of one service process (its main.ts): config from the environment (a bad value exits
 * 2 naming it), telemetry, logger, NATS connection as the service's own user, metrics and probes
 * on METRICS_PORT (unset: none, so several services can run on one machine; 0: a free port; the
 * Kubernetes manifests set 9464), then `start`. On SIGTERM readiness goes false, the handle's
 * stop runs (the gateway closes HTTP), the bus drains (work in flight finishes, bounded by
 * ASKBUS_DRAIN_MS), the handle's close runs, telemetry flushes, the process exits.
 */
export async function runMain<Config>(decl: ServiceDeclaration<Config>): Promise<void> {
  let config: Config;
  try {
    config = readConfig(decl, process.env);
  } catch (err) {
    if (!(err instanceof ServiceConfigError)) throw err;
    console.error(err.message);
    process.exit(2);
  }
  const telemetry = startTelemetry(decl.name);
  const log = createLogger(decl.name);
  const bus = await connectBus({
    service: decl.name,
    log: (level, msg, fields) => log[level](fields ?? {}, msg),
  });
  const registry = createRegistry();
  instrumentBus(bus, registry);
  const stopping = new AbortController();
  let handle;
  try {
    handle =
      (await decl.start({ name: decl.name, bus, log, config, registry, signal: stopping.signal })) ?? {};
  } catch (err) {
    log.error({ err }, `${decl.name} could not start`);
    await bus.drain(1_000).catch(() => undefined);
    await telemetry.shutdown();
    process.exit(1);
  }
  if (handle.llm) instrumentLlm(decl.name, handle.llm, registry);
  const portSetting = process.env.METRICS_PORT ?? '';
  const ops =
    portSetting === '' || portSetting === 'off'
      ? undefined
      : await startOpsServer({
          port: Number(portSetting),
          registry,
          ready: () => !bus.draining && !bus.nc.isClosed(),
        });
  log.info(
    { nats: bus.nc.getServer(), opsPort: ops?.port, url: handle.url, ...handle.describe },
    `askbus ${decl.name} serving`,
  );
  if (handle.url) console.log(`askbus ${decl.name} listening on ${handle.url}`);
  const { stop, close } = handle;
  onShutdown(async () => {
    log.info('draining');
    stopping.abort();
    await stop?.();
    await bus.drain(Number(process.env.ASKBUS_DRAIN_MS ?? 10_000));
    await close?.();
    await ops?.close();
    await telemetry.shutdown();
  });
}
