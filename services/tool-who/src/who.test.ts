import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { contracts, toolContract } from '@askbus/contracts';
import type { Message, ResultItem } from '@askbus/contracts';
import { loadDemoSites } from '@askbus/demo-data';
import { buildGateway } from '@askbus/gateway';
import { startRetriever } from '@askbus/retriever';
import { startRouter } from '@askbus/router';
import { matchingTypes, startWhoTool, whoSubject } from './index';

// The who tool (what the router answers "which site can …" with) and the gateway's /who rank
// the same sites with the same scores: /who asks the router for the who tool, over the real
// retriever holding the demo sites, on a real NATS.
let nats: Awaited<ReturnType<typeof testNats>>;
const buses: Bus[] = [];
let caller: Bus;
let gateway: FastifyInstance;

beforeAll(async () => {
  nats = await testNats();
  const connect = async (service: string): Promise<Bus> => {
    const bus = await testBus(nats.url, service);
    buses.push(bus);
    return bus;
  };
  await startRetriever(await connect('retriever'));
  startWhoTool(await connect('tool-who'));
  // the gateway's /who asks the router for the who tool
  startRouter(await connect('router'));
  caller = await connect('router');
  await Promise.all(buses.map((b) => b.nc.flush()));
  for (const { site, items } of loadDemoSites()) {
    for (let i = 0; i < items.length; i += 500) {
      await caller.request(
        contracts.upsert,
        { site, items: items.slice(i, i + 500), persist: false },
        { timeoutMs: 60_000 },
      );
    }
  }
  gateway = await buildGateway(await connect('gateway'));
}, 120_000);

afterAll(async () => {
  await gateway?.close();
  for (const b of buses) await b.drain(500);
  await nats?.stop();
});

let n = 0;
/** The who tool's answer, as the router gets it: the sites named and their scores. */
async function tool(query: string): Promise<{ sites: [string, number][]; messages: Message[] }> {
  const messages: Message[] = [];
  const ask = {
    queryId: `who${++n}`,
    query,
    site: ['all'],
    prev: [],
    mode: 'list' as const,
    conversationId: '',
    maxResults: 10,
    minScore: 51,
  };
  for await (const m of caller.stream(toolContract('who'), { ask, params: {} }, { timeoutMs: 30_000 }))
    messages.push(m);
  const sites = messages
    .filter((m) => m.message_type === 'result')
    .flatMap((m) => (Array.isArray(m.content) ? (m.content as ResultItem[]) : []))
    .map((r): [string, number] => [r.name, r.score]);
  return { sites, messages };
}

/** The gateway's GET /who answer: the sites named and their scores. */
async function rest(query: string): Promise<[string, number][]> {
  const res = await gateway.inject({ url: `/who?query=${encodeURIComponent(query)}` });
  expect(res.statusCode).toBe(200);
  return res.json<{ results: { name: string; score: number }[] }>().results.map((r) => [r.name, r.score]);
}

describe('who: the tool and the gateway agree', () => {
  it.each([
    ['which sites can tell me about toyota cars', 'cars'],
    ['where can I find movies by Ridley Scott', 'movies'],
    ['who has information about science fiction films', 'movies'],
  ])('%s → %s first, same sites and scores both ways', async (query, first) => {
    const [viaTool, viaRest] = await Promise.all([tool(query), rest(query)]);
    expect(viaTool.sites[0]?.[0]).toBe(first);
    expect(viaTool.sites[0]?.[1]).toBeGreaterThanOrEqual(60);
    expect(viaRest).toEqual(viaTool.sites);
  });

  // Whatever the retriever finds for these, both answer alike.
  it.each(['which sites can tell me about fuel efficient cars', 'japanese cars', 'westerns', 'the'])(
    '%s: same sites and scores both ways',
    async (query) => {
      const [viaTool, viaRest] = await Promise.all([tool(query), rest(query)]);
      expect(viaRest).toEqual(viaTool.sites);
    },
  );

  it.each(['qxzvj blorft wumpkin', 'which site can tell me about qxzvj blorft'])(
    'gibberish (%s) names no site either way',
    async (query) => {
      // The retriever still finds items for it (its vectors always have neighbours): what names
      // no site is that none of them matches.
      const found = await caller.request(
        contracts.search,
        { query: whoSubject(query), site: ['movies'], numResults: 5 },
        { timeoutMs: 10_000 },
      );
      expect(found.items.length).toBeGreaterThan(0);
      const [viaTool, viaRest] = await Promise.all([tool(query), rest(query)]);
      expect(viaTool.sites).toEqual([]);
      expect(viaTool.messages.some((m) => m.message_type === 'no_results')).toBe(true);
      expect(viaRest).toEqual([]);
    },
  );
});

describe('who: the type filter', () => {
  it('matches wanted types to a site case-insensitively, in its own spelling', () => {
    const s = { name: 's', itemCount: 1, types: ['Movie', 'TVSeries'] };
    expect(matchingTypes(['movie', 'tvseries', 'Car'], s)).toEqual(['Movie', 'TVSeries']);
    expect(matchingTypes(['Car'], s)).toEqual([]);
  });
});
