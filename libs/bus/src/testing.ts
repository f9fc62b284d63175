import { z } from 'zod';
import { contracts, ScoredItem, StoredItem, type StreamContract } from '@askbus/contracts';
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

/**
 * `rank.v1.score`'s subject with whole items in and one ScoredItem per chunk out: the bus tests'
 * example stream. (The ranker's own contract sends a batch per chunk; what the bus's streaming
 * guarantees does not depend on the shape of what it carries.)
 */
export const perItemScore: StreamContract<
  z.ZodObject<{ query: z.ZodString; items: z.ZodArray<typeof StoredItem> }>,
  typeof ScoredItem
> = {
  kind: 'stream',
  subject: contracts.score.subject,
  request: z.object({ query: z.string().min(1), items: z.array(StoredItem).min(1).max(200) }),
  chunk: ScoredItem,
};
