import type { Registry } from 'prom-client';
import { connectBus, type Bus, type ConnectOptions } from '@askbus/bus';
import { createLogger, createRegistry, inService, instrumentBus, instrumentLlm } from '@askbus/telemetry';
import { readConfig } from './config';
import type { Env, ServiceDeclaration, ServiceHandle } from './declare';
import type { System } from './system';

export interface InProcessOptions {
  system: System;
  /** The environment every service's config is read from (the same schemas as their main.ts). */
  env: Env;
  natsUrl: string;
  /** Instances per service (default 1), each on its own NATS connection. */
  replicas?: Readonly<Record<string, number>>;
  /** Each service's own NATS credentials, by its name. */
  credentials?: (user: string) => Pick<ConnectOptions, 'user' | 'pass' | 'token' | 'credsFile'>;
  /** The metrics every service adds to (default: a new registry). */
  registry?: Registry;
}

export interface RunningInstance {
  service: string;
  bus: Bus;
  handle: ServiceHandle;
}

export interface InProcessSystem {
  /** Every instance, in start order. */
  instances: RunningInstance[];
  registry: Registry;
  /** The handles of one service's instances. */
  handles(service: string): ServiceHandle[];
  /** Stops in reverse start order: the gateway first, each service drained before the next. */
  stop(): Promise<void>;
}

/**
 * Runs every declared service in this process, each instance on its own NATS connection as its
 * own user, with the config its declaration reads from `env`, its own telemetry service name
 * (inService) and the LLM metrics of its handle: what `askbus up` runs.
 */
export async function runInProcess(opts: InProcessOptions): Promise<InProcessSystem> {
  const registry = opts.registry ?? createRegistry();
  const order = opts.system.startOrder();
  // Every config first, so a bad variable stops everything before anything starts.
  const configs = new Map(order.map((d) => [d.name, readConfig(d, opts.env)]));
  const drainMs = Number(opts.env.ASKBUS_DRAIN_MS ?? 5_000);
  const level = opts.env.LOG_LEVEL ?? 'warn';
  const instances: RunningInstance[] = [];
  const stopping = new AbortController();

  const stop = async (): Promise<void> => {
    stopping.abort();
    for (const { bus, handle } of [...instances].reverse()) {
      await handle.stop?.();
      await bus.drain(drainMs);
      await handle.close?.();
    }
    instances.length = 0;
  };

  try {
    for (const decl of order) {
      const count = opts.replicas?.[decl.name] ?? 1;
      for (let i = 0; i < count; i++) {
        instances.push(
          await startInstance(decl, configs.get(decl.name), opts, registry, level, stopping.signal),
        );
      }
    }
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
  return {
    instances,
    registry,
    handles: (service) => instances.filter((i) => i.service === service).map((i) => i.handle),
    stop,
  };
}

function startInstance(
  decl: ServiceDeclaration,
  config: unknown,
  opts: InProcessOptions,
  registry: Registry,
  level: string,
  signal: AbortSignal,
): Promise<RunningInstance> {
  return inService(decl.name, async () => {
    const log = createLogger(decl.name, { level });
    const bus = await connectBus({
      servers: opts.natsUrl,
      service: decl.name,
      log: (lvl, msg, fields) => log[lvl](fields ?? {}, msg),
      ...opts.credentials?.(decl.name),
    });
    instrumentBus(bus, registry);
    try {
      const handle = (await decl.start({ name: decl.name, bus, log, config, registry, signal })) ?? {};
      if (handle.llm) instrumentLlm(decl.name, handle.llm, registry);
      await bus.nc.flush();
      log.info({ ...handle.describe, url: handle.url }, `askbus ${decl.name} serving`);
      return { service: decl.name, bus, handle };
    } catch (err) {
      await bus.drain(1_000).catch(() => undefined);
      throw err;
    }
  });
}
