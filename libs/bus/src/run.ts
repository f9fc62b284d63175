import { connect } from '@nats-io/transport-node';
import { Bus, type BusOptions } from './bus';

export interface ConnectOptions extends BusOptions {
  /** NATS server URL(s); defaults to NATS_URL, then nats://127.0.0.1:4222. */
  servers?: string | string[];
}

/** Connects to NATS with reconnects for ever (a NATS restart must not end a service). */
export async function connectBus(opts: ConnectOptions): Promise<Bus> {
  const nc = await connect({
    servers: opts.servers ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    name: `askbus-${opts.service}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
  });
  return new Bus(nc, opts);
}

/**
 * Runs `stop` once on SIGTERM or SIGINT, then exits; a second signal exits at once.
 * Returns a function that removes the handlers.
 */
export function onShutdown(stop: () => Promise<void>, exit = true): () => void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals): void => {
    if (stopping) process.exit(1);
    stopping = true;
    void stop()
      .catch((err) => console.error(`shutdown after ${signal} failed:`, err))
      .finally(() => exit && process.exit(0));
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  return () => {
    process.off('SIGTERM', handler);
    process.off('SIGINT', handler);
  };
}
