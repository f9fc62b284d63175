import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { buildGateway } from './index';
import { contracts } from '@askbus/contracts';
import type { RetrievedItem } from '@askbus/contracts';
import { rankWhoSites } from '@askbus/search-core';
import { parseSse, serveFakeRetriever, serveFakeRouter } from './testing';
import type { Subscription } from './testing';
import { violations, whoStreamViolations } from './spec/nlweb05';

// /who in both forms against a real NATS, through the fake router's who tool, with the fake
// retriever (sites) and a small catalogue
// searched as a vector index is: every item of a site comes back for any query (gibberish too),
// so what ranks the sites is how well their items match, not whether anything was found.
const CATALOGUE: Record<string, RetrievedItem[]> = {
  movies: [
    ['Blade Runner', 'Science Fiction', 'a science fiction film about replicants'],
    ['Alien', 'Science Fiction', 'a science fiction horror film in space'],
    ['Pale Rider', 'Western', 'a western film with Clint Eastwood'],
  ].map(([name, genre, description], i) => ({
    url: `https://movies.example/item/${i}`,
    name: name!,
    site: 'movies',
    '@type': 'Movie',
    schema_object: { '@type': 'Movie', name, genre, description },
    retrievalScore: 0.9 - i / 10,
  })),
  cars: [
    ['Ford Mustang', 'a fast sports car with a V8 engine'],
    ['Honda Civic', 'a fuel efficient compact car'],
  ].map(([name, description], i) => ({
    url: `https://cars.example/item/${i}`,
    name: name!,
    site: 'cars',
    '@type': 'Car',
    schema_object: { '@type': 'Car', name, description },
    retrievalScore: 0.8 - i / 10,
  })),
};

interface SearchCall {
  query: string;
  site: string[];
  numResults: number;
  types?: string[] | undefined;
}

function serveCatalogue(bus: Bus): { calls: SearchCall[]; sub: Subscription } {
  const calls: SearchCall[] = [];
  const sub = bus.serve(contracts.search, async (req) => {
    calls.push({ query: req.query, site: req.site, numResults: req.numResults, types: req.types });
    let items = req.site.flatMap((s) => CATALOGUE[s] ?? []).slice(0, req.numResults);
    if (req.types) items = items.filter((i) => req.types!.includes(i['@type']));
    return { items };
  });
  return { calls, sub };
}
let nats: Awaited<ReturnType<typeof testNats>>;
let retrieverBus: Bus;
let routerBus: Bus;
let gatewayBus: Bus;
let sites: Subscription;
let search: ReturnType<typeof serveCatalogue>;
let app: FastifyInstance;

beforeAll(async () => {
  nats = await testNats();
  [retrieverBus, routerBus, gatewayBus] = await Promise.all([
    testBus(nats.url, 'retriever'),
    testBus(nats.url, 'router'),
    testBus(nats.url, 'gateway'),
  ]);
  serveFakeRouter(routerBus);
  await routerBus.nc.flush();
  sites = serveFakeRetriever(retrieverBus);
  search = serveCatalogue(retrieverBus);
  await retrieverBus.nc.flush();
  app = await buildGateway(gatewayBus, { keepAliveMs: 5_000 });
});

afterAll(async () => {
  await app?.close();
  await Promise.all([retrieverBus?.drain(), routerBus?.drain(), gatewayBus?.drain()]);
  await nats?.stop();
});

interface Who2025 {
  '@type': string;
  url: string;
  name: string;
  score: number;
  description: string;
  query: string;
  hits: number;
}

interface Who2025 {
  '@type': string;
  url: string;
  name: string;
  score: number;
  description: string;
  query: string;
  matches: number;
  hits: number;
  best: { name: string; url: string; score: number };
}

const GIBBERISH = 'qxzvj blorft wumpkin';

/** What search-core's scorer makes of the cars for a query (its exact numbers are its own). */
const carsRank = (query: string) => {
  const ranked = rankWhoSites(query, [
    { name: 'cars', itemCount: 2, types: ['Car'], items: CATALOGUE.cars! },
  ]);
  if (!ranked[0]) throw new Error(`no car matches "${query}"`);
  return ranked[0];
};

describe('GET /who (2025 parameters)', () => {
  it('answers JSON by default: NLWeb who items, scored by how well the sites match', async () => {
    const res = await app.inject({ url: '/who?query=fast%20cars' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const body = res.json<{ query: string; results: Who2025[]; messages: { message_type: string }[] }>();
    expect(body.query).toBe('fast cars');
    // Movies were found too (every search finds something) but match nothing of "fast cars".
    expect(body.results.map((r) => r.name)).toEqual(['cars']);
    const { score } = carsRank('fast cars');
    expect(score).toBeGreaterThanOrEqual(60);
    expect(body.results[0]).toEqual({
      '@type': 'Website',
      url: 'http://localhost:80/?site=cars&query=fast%20cars&tool=search',
      name: 'cars',
      score,
      description: `cars: 1 of 2 items found match "fast cars", best Ford Mustang (${score}); types: Car`,
      query: 'fast cars',
      matches: 1,
      hits: 2,
      item_count: 2,
      types: ['Car'],
      best: { name: 'Ford Mustang', url: 'https://cars.example/item/0', score },
    });
    expect(body.messages.map((m) => m.message_type)).toEqual([
      'begin-nlweb-response',
      'result',
      'end-nlweb-response',
    ]);
    // One search per loaded site, 20 items each, no type filter.
    expect(search.calls.slice(-2).map((c) => [c.site, c.numResults, c.types])).toEqual(
      expect.arrayContaining([
        [['movies'], 20, undefined],
        [['cars'], 20, undefined],
      ]),
    );
  });

  it('judges a "which site can …" question on its subject', async () => {
    const body = (
      await app.inject({ url: '/who?query=which+site+can+tell+me+about+science+fiction+films' })
    ).json<{
      results: Who2025[];
    }>();
    expect(body.results.map((r) => [r.name, r.matches])).toEqual([['movies', 2]]);
    expect(body.results[0]!.score).toBeGreaterThanOrEqual(60);
    expect(search.calls.at(-1)!.query).toBe('science fiction films');
  });

  it('streams begin, result, end as data: events with streaming=true (or Accept)', async () => {
    for (const opts of [
      { url: '/who?query=science%20fiction&streaming=true' },
      { url: '/who?query=science%20fiction', headers: { accept: 'text/event-stream' } },
    ]) {
      const res = await app.inject(opts);
      expect(res.headers['content-type']).toBe('text/event-stream');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      const events = parseSse(res.body).map((e) => e.data as { message_type: string; content?: Who2025[] });
      expect(events.map((e) => e.message_type)).toEqual([
        'begin-nlweb-response',
        'result',
        'end-nlweb-response',
      ]);
      const [movies] = rankWhoSites('science fiction', [
        { name: 'movies', itemCount: 3, types: ['Movie'], items: CATALOGUE.movies! },
      ]);
      expect(events[1]!.content!.map((r) => [r.name, r.score, r.matches, r.hits])).toEqual([
        ['movies', movies!.score, 2, 3],
      ]);
    }
  });

  it('gibberish names no site, though every site returned items for it', async () => {
    const before = search.calls.length;
    const body = (await app.inject({ url: `/who?query=${encodeURIComponent(GIBBERISH)}` })).json<{
      results: unknown[];
      messages: { message_type: string; content?: unknown }[];
    }>();
    expect(search.calls.length - before).toBe(2);
    expect(body.results).toEqual([]);
    expect(body.messages[1]).toMatchObject({
      message_type: 'no_results',
      content: `No loaded site can answer "${GIBBERISH}".`,
    });
  });

  it('a missing or blank query is a 400 naming it', async () => {
    const res = await app.inject({ url: '/who' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ message_type: 'error', code: 'bad_request', parameter: 'query' });
    const blank = await app.inject({ url: '/who?query=%20' });
    expect(blank.json()).toMatchObject({ parameter: 'query' });
  });
});

describe('POST /who (protocol 0.5 WhoRequest)', () => {
  interface Agent {
    '@type': string;
    agentSpec: Record<string, unknown>;
  }
  interface WhoResponse {
    _meta: Record<string, unknown>;
    content: { type: string; text?: string; resource?: { uri?: string; data: Agent } }[];
  }

  it('answers Agent resources with the scores behind the choice, after a text item', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/who',
      payload: { query: 'fuel efficient cars', streaming: false, conversation_id: 'cw' },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<WhoResponse>();
    expect(violations('WhoResponse', body)).toEqual([]);
    expect(body._meta).toEqual({ version: '0.5', conversation_id: 'cw' });
    const { score } = carsRank('fuel efficient cars');
    expect(body.content[0]).toEqual({
      type: 'text',
      text: `1 site can answer "fuel efficient cars", best first: cars (score ${score}, 1 matching items).`,
    });
    const agents = body.content.slice(1);
    expect(agents.map((a) => violations('Agent', a.resource!.data))).toEqual([[]]);
    expect(agents[0]!.resource).toEqual({
      uri: 'http://localhost:80/ask',
      data: {
        '@type': 'Search Agent',
        agentSpec: {
          name: 'cars',
          description: `cars: 1 of 2 items found match "fuel efficient cars", best Honda Civic (${score}); types: Car`,
          url: 'http://localhost:80/ask',
          protocol: 'NLWeb',
          version: '0.5',
          site: 'cars',
          types: ['Car'],
          score,
          matches: 1,
          hits: 2,
          best: { name: 'Honda Civic', url: 'https://cars.example/item/1', score },
          item_count: 2,
          request: { query: { text: 'fuel efficient cars', site: ['cars'] } },
        },
      },
    });
  });

  it('streams by default: a _meta event, then the content', async () => {
    const res = await app.inject({ method: 'POST', url: '/who', payload: { query: 'science fiction' } });
    expect(res.headers['content-type']).toBe('text/event-stream');
    const events = parseSse(res.body).map((e) => e.data as Partial<WhoResponse>);
    expect(whoStreamViolations(events)).toEqual([]);
    expect(events).toHaveLength(2);
    expect(events[0]).toEqual({ _meta: { version: '0.5' } });
    expect(events[1]!.content!.map((c) => c.type)).toEqual(['text', 'resource']);
  });

  it('constr.type keeps only sites with that schema.org type and filters their search by it', async () => {
    const before = search.calls.length;
    const res = await app.inject({
      method: 'POST',
      url: '/who',
      payload: {
        query: 'a western with clint eastwood',
        streaming: false,
        constr: { type: 'movie', colour: 'red' },
      },
    });
    const body = res.json<WhoResponse>();
    expect(body.content.slice(1).map((c) => c.resource!.data.agentSpec.name)).toEqual(['movies']);
    expect(search.calls.slice(before)).toEqual([
      { query: 'a western with clint eastwood', site: ['movies'], numResults: 20, types: ['Movie'] },
    ]);
  });

  it('no site can answer gibberish: the text says so, and the answer is still a WhoResponse', async () => {
    const body = (
      await app.inject({ method: 'POST', url: '/who', payload: { query: GIBBERISH, streaming: false } })
    ).json<WhoResponse>();
    expect(body.content).toEqual([{ type: 'text', text: `No loaded site can answer "${GIBBERISH}".` }]);
    expect(violations('WhoResponse', body)).toEqual([]);
  });

  const bad: [string, { payload: unknown; headers?: Record<string, string> }, string][] = [
    ['no query', { payload: {} }, 'query'],
    ['query not text', { payload: { query: 5 } }, 'query'],
    ['blank query', { payload: { query: '  ' } }, 'query'],
    ['streaming', { payload: { query: 'x', streaming: 'often' } }, 'streaming'],
    ['conversation_id', { payload: { query: 'x', conversation_id: [] } }, 'conversation_id'],
    ['constr', { payload: { query: 'x', constr: 'movies' } }, 'constr'],
    ['constr.type', { payload: { query: 'x', constr: { type: 3 } } }, 'constr.type'],
    ['a JSON list', { payload: [1] }, 'body'],
    ['no body', { payload: '', headers: { 'content-type': 'text/plain' } }, 'body'],
    ['invalid JSON', { payload: '{"query": ', headers: { 'content-type': 'application/json' } }, 'body'],
  ];
  it.each(bad)(
    'malformed (%s) is a 400 WhoResponse failure naming the field',
    async (_n, opts, parameter) => {
      const res = await app.inject({ method: 'POST', url: '/who', ...opts } as InjectOptions);
      expect(res.statusCode).toBe(400);
      const body = res.json<WhoResponse>();
      expect(body).toMatchObject({
        _meta: { version: '0.5', error: { code: 'INVALID_REQUEST', parameter } },
        content: [{ type: 'text' }],
      });
      expect(violations('WhoResponse', body)).toEqual([]);
    },
  );
});

describe('/who without a retriever', () => {
  it('is a 503 in each form', async () => {
    sites.unsubscribe();
    await retrieverBus.nc.flush();
    try {
      const get = await app.inject({ url: '/who?query=films' });
      expect(get.statusCode).toBe(503);
      expect(get.json()).toMatchObject({ message_type: 'error', code: 'no_responders', status: 503 });
      const post = await app.inject({ method: 'POST', url: '/who', payload: { query: 'films' } });
      expect(post.statusCode).toBe(503);
      expect(post.json()).toMatchObject({
        _meta: {
          version: '0.5',
          error: { code: 'UNAVAILABLE', message: expect.stringContaining('retriever is not available') },
        },
      });
      expect(violations('WhoResponse', post.json())).toEqual([]);
    } finally {
      sites = serveFakeRetriever(retrieverBus);
      await retrieverBus.nc.flush();
    }
  });
});

describe('who ranking (search-core rankWhoSites, shared with the who tool)', () => {
  const site = (name: string, items: RetrievedItem[]) => ({
    name,
    itemCount: items.length,
    types: [],
    items,
  });

  it('a site scores its best item: the same whatever the other sites are', () => {
    const alone = rankWhoSites('fast cars', [site('cars', CATALOGUE.cars!)]);
    const together = rankWhoSites('fast cars', [
      site('movies', CATALOGUE.movies!),
      site('cars', CATALOGUE.cars!),
    ]);
    expect(together).toEqual(alone);
    expect(alone.map((s) => [s.name, s.best.name])).toEqual([['cars', 'Ford Mustang']]);
    expect(alone[0]!.score).toBeGreaterThanOrEqual(60);
  });

  it('gibberish gets no site, and no site scores high', () => {
    const all = Object.entries(CATALOGUE).map(([name, items]) => site(name, items));
    expect(rankWhoSites(GIBBERISH, all)).toEqual([]);
    expect(rankWhoSites(GIBBERISH, all, { minScore: 0 }).every((s) => s.score < 60)).toBe(true);
  });
});
