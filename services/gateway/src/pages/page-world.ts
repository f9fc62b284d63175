import type { FastifyInstance } from 'fastify';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { buildGateway } from '../index';
import { serveFakeRetriever } from '../testing';
import { servePageRouter, type PageRouter } from './page-router';

/**
 * What the page, chat-API and conversation tests run against: a nats-server of their own, the
 * page router (pages' answers by question), a fake retriever for /sites, and the real gateway
 * listening on a free port.
 */
export interface PageWorld {
  nats: Awaited<ReturnType<typeof testNats>>;
  routerBus: Bus;
  retrieverBus: Bus;
  gatewayBus: Bus;
  router: PageRouter;
  app: FastifyInstance;
  base: string;
  /** Closes the gateway, drains the buses and stops the nats-server. */
  stop(): Promise<void>;
}

export async function startPageWorld(): Promise<PageWorld> {
  const nats = await testNats();
  const [routerBus, retrieverBus, gatewayBus] = await Promise.all([
    testBus(nats.url, 'router'),
    testBus(nats.url, 'retriever'),
    testBus(nats.url, 'gateway'),
  ]);
  const router = servePageRouter(routerBus);
  serveFakeRetriever(retrieverBus);
  await Promise.all([routerBus.nc.flush(), retrieverBus.nc.flush()]);
  const app = await buildGateway(gatewayBus, { keepAliveMs: 5_000, askTimeoutMs: 5_000 });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    nats,
    routerBus,
    retrieverBus,
    gatewayBus,
    router,
    app,
    base,
    stop: async () => {
      await app.close();
      await Promise.all([routerBus.drain(), retrieverBus.drain(), gatewayBus.drain()]);
      await nats.stop();
    },
  };
}
