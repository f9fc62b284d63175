import { randomUUID } from 'node:crypto';
/** Test harness of the MCP tests: a real NATS, the fake router and retriever, a listening gateway. */
import type { FastifyInstance } from 'fastify';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { contracts } from '@askbus/contracts';
import type { RetrievedItem } from '@askbus/contracts';
import { buildGateway } from '../index';
import type { GatewayOptions } from '../index';
import { FAKE_SITES, serveFakeRetriever, serveFakeRouter } from '../testing';
import type { FakeRouter } from '../testing';

export interface McpWorld {
  nats: Awaited<ReturnType<typeof testNats>>;
  routerBus: Bus;
  gatewayBus: Bus;
  router: FakeRouter;
  /** Starts a gateway on a free port; closed by `stop()`. */
  gateway(opts?: GatewayOptions): Promise<{ app: FastifyInstance; base: string; ws: string }>;
  stop(): Promise<void>;
}

/** A found item: a Car on site cars, else a Movie, named after its type ("Car 0"). */
const hit = (site: string, n: number, score: number): RetrievedItem => {
  const type = site === 'cars' ? 'Car' : 'Movie';
  return {
    url: `https://${site}.example/item/${n}`,
    name: `${type} ${n}`,
    site,
    '@type': type,
    schema_object: { '@type': type, name: `${type} ${n}` },
    retrievalScore: score,
  };
};

/**
 * contracts.search for `who`: "cars" queries hit cars twice and movies once; anything else hits
 * movies three times and cars never.
 */
function serveFakeSearch(bus: Bus): void {
  bus.serve(contracts.search, async (req) => {
    const site = req.site[0];
    const cars = /\bcars?\b/i.test(req.query);
    if (site === 'cars') return { items: cars ? [hit('cars', 0, 0.9), hit('cars', 1, 0.6)] : [] };
    if (site === 'movies') {
      return {
        items: cars
          ? [hit('movies', 0, 0.3)]
          : [hit('movies', 0, 0.8), hit('movies', 1, 0.7), hit('movies', 2, 0.2)],
      };
    }
    return { items: [] };
  });
}

export async function mcpWorld(): Promise<McpWorld> {
  const nats = await testNats();
  const [routerBus, gatewayBus] = await Promise.all([
    testBus(nats.url, 'router'),
    testBus(nats.url, 'gateway'),
  ]);
  const router = serveFakeRouter(routerBus);
  serveFakeRetriever(routerBus);
  serveFakeSearch(routerBus);
  await routerBus.nc.flush();
  const apps: FastifyInstance[] = [];
  return {
    nats,
    routerBus,
    gatewayBus,
    router,
    async gateway(opts = {}) {
      // Each gateway of a test counts its own limits unless the test says otherwise.
      const app = await buildGateway(gatewayBus, { limitsScope: randomUUID(), ...opts });
      apps.push(app);
      await app.listen({ port: 0, host: '127.0.0.1' });
      const addr = app.server.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      return { app, base: `http://127.0.0.1:${port}`, ws: `ws://127.0.0.1:${port}/mcp/ws` };
    },
    async stop() {
      await Promise.all(apps.map((a) => a.close()));
      await Promise.all([routerBus.drain(), gatewayBus.drain()]);
      await nats.stop();
    },
  };
}

export { FAKE_SITES };

/** A new router call for `query` after `from` calls, once it arrived. */
export function callAfter(router: FakeRouter, from: number, query: string): string | undefined {
  return router.calls.slice(from).find((c) => c.req.query === query)?.queryId;
}
