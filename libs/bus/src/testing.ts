import type { Bus } from './bus';
import { type BusOptions } from './bus';
import { connectBus } from './run';
import { startNatsServer, type NatsServerHandle } from './nats-server';

/**
 * A NATS server for one test file: our own nats-server on a free port, so tests never share
 * subjects with a running askbus; NATS_URL is used only where no nats-server binary exists.
 */
export async function testNats(): Promise<{ url: string; stop(): Promise<void>; server?: NatsServerHandle }> {
  try {
    const server = await startNatsServer();
    return { url: server.url, stop: () => server.stop(), server };
  } catch (err) {
    if (process.env.NATS_URL) return { url: process.env.NATS_URL, stop: async () => undefined };
    throw err;
  }
}

/** Connects a bus for a test; call `drain()` in afterAll. */
export function testBus(url: string, service: string, opts: Partial<BusOptions> = {}): Promise<Bus> {
  return connectBus({ servers: url, service, ...opts });
}
