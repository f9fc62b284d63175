import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { buildGateway } from './index';
import { parseSse, serveFakeRetriever, serveFakeSearch } from './testing';
import type { FakeSearch, Subscription } from './testing';
import { matchingTypes, whoScores } from './who';
import type { SiteRank } from './who';

// /who in both forms against a real NATS with the fake retriever (sites and search).
let nats: Awaited<ReturnType<typeof testNats>>;
let retrieverBus: Bus;
let gatewayBus: Bus;
let sites: Subscription;
let search: FakeSearch;
let app: FastifyInstance;

beforeAll(async () => {
  nats = await testNats();
  [retrieverBus, gatewayBus] = await Promise.all([
    testBus(nats.url, 'retriever'),
    testBus(nats.url, 'gateway'),
  ]);
  sites = serveFakeRetriever(retrieverBus);
  search = serveFakeSearch(retrieverBus);
  await retrieverBus.nc.flush();
  app = await buildGateway(gatewayBus, { keepAliveMs: 5_000 });
});

afterAll(async () => {
  await app?.close();
  await Promise.all([retrieverBus?.drain(), gatewayBus?.drain()]);
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

describe('GET /who (2025 parameters)', () => {
  it('answers JSON by default: NLWeb who items ranked by the retriever hits per site', async () => {
    const res = await app.inject({ url: '/who?query=fast%20cars' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const body = res.json<{ query: string; results: Who2025[]; messages: { message_type: string }[] }>();
    expect(body.query).toBe('fast cars');
    expect(body.results.map((r) => r.name)).toEqual(['cars', 'movies']);
    expect(body.results[0]).toEqual({
      '@type': 'Website',
      url: 'http://localhost:80/?site=cars&query=fast%20cars&tool=search',
      name: 'cars',
      score: 100,
      description: 'cars: 2 of its 2 items match "fast cars" (best retrieval score 0.9); types: Car',
      query: 'fast cars',
      hits: 2,
      top_score: 0.9,
      item_count: 2,
      types: ['Car'],
    });
    expect(body.results[1]).toMatchObject({ name: 'movies', hits: 1, top_score: 0.3, score: 42 });
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

  it('streams begin, result, end as data: events with streaming=true (or Accept)', async () => {
    for (const opts of [
      { url: '/who?query=films&streaming=true' },
      { url: '/who?query=films', headers: { accept: 'text/event-stream' } },
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
      expect(events[1]!.content!.map((r) => [r.name, r.score, r.hits])).toEqual([['movies', 100, 3]]);
    }
  });

  it('no matching site: no results and a no_results message', async () => {
    const body = (await app.inject({ url: '/who?query=nothing' })).json<{
      results: unknown[];
      messages: { message_type: string; content?: unknown }[];
    }>();
    expect(body.results).toEqual([]);
    expect(body.messages[1]).toMatchObject({
      message_type: 'no_results',
      content: 'No loaded site has items matching "nothing".',
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
      payload: { query: 'fast cars', streaming: false, conversation_id: 'cw' },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<WhoResponse>();
    expect(body._meta).toEqual({ response_type: 'Answer', version: '0.5', conversation_id: 'cw' });
    expect(body.content[0]).toEqual({
      type: 'text',
      text: '2 sites can answer "fast cars", best first: cars (score 100, 2 matching items), movies (score 42, 1 matching items).',
    });
    const agents = body.content.slice(1);
    expect(agents.every((c) => c.type === 'resource' && c.resource!.data['@type'] === 'Search Agent')).toBe(
      true,
    );
    expect(agents[0]!.resource).toEqual({
      uri: 'http://localhost:80/ask',
      data: {
        '@type': 'Search Agent',
        agentSpec: {
          name: 'cars',
          description: 'cars: 2 of its 2 items match "fast cars" (best retrieval score 0.9); types: Car',
          url: 'http://localhost:80/ask',
          protocol: 'NLWeb',
          version: '0.5',
          site: 'cars',
          types: ['Car'],
          score: 100,
          hits: 2,
          top_score: 0.9,
          item_count: 2,
          request: { query: { text: 'fast cars', site: ['cars'] } },
        },
      },
    });
    expect(agents[1]!.resource!.data.agentSpec).toMatchObject({ name: 'movies', score: 42, hits: 1 });
  });

  it('streams by default: a _meta event, then the content', async () => {
    const res = await app.inject({ method: 'POST', url: '/who', payload: { query: 'films' } });
    expect(res.headers['content-type']).toBe('text/event-stream');
    const events = parseSse(res.body).map((e) => e.data as Partial<WhoResponse>);
    expect(events).toHaveLength(2);
    expect(events[0]).toEqual({ _meta: { response_type: 'Answer', version: '0.5' } });
    expect(events[1]!.content!.map((c) => c.type)).toEqual(['text', 'resource']);
  });

  it('constr.type keeps only sites with that schema.org type and filters their search by it', async () => {
    const before = search.calls.length;
    const res = await app.inject({
      method: 'POST',
      url: '/who',
      payload: { query: 'fast cars', streaming: false, constr: { type: 'movie', colour: 'red' } },
    });
    const body = res.json<WhoResponse>();
    expect(body.content.slice(1).map((c) => c.resource!.data.agentSpec.name)).toEqual(['movies']);
    expect(search.calls.slice(before)).toEqual([
      { query: 'fast cars', site: ['movies'], numResults: 20, types: ['Movie'] },
    ]);
  });

  it('no site can answer: the text says so', async () => {
    const body = (
      await app.inject({ method: 'POST', url: '/who', payload: { query: 'nothing', streaming: false } })
    ).json<WhoResponse>();
    expect(body.content).toEqual([{ type: 'text', text: 'No loaded site has items matching "nothing".' }]);
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
  it.each(bad)('malformed (%s) is a 400 Failure naming the field', async (_n, opts, parameter) => {
    const res = await app.inject({ method: 'POST', url: '/who', ...opts } as InjectOptions);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      _meta: { response_type: 'Failure', version: '0.5' },
      error: { code: 'INVALID_REQUEST', parameter },
    });
  });
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
        _meta: { response_type: 'Failure', version: '0.5' },
        error: { code: 'UNAVAILABLE', message: expect.stringContaining('retriever is not available') },
      });
    } finally {
      sites = serveFakeRetriever(retrieverBus);
      await retrieverBus.nc.flush();
    }
  });
});

describe('who ranking', () => {
  const rank = (name: string, hits: number, top: number): SiteRank => ({
    name,
    hits,
    top_score: top,
    item_count: 50,
    types: [],
  });

  it('scores the best site 100 and never rises down the ranked list', () => {
    expect(whoScores([])).toEqual([]);
    expect(whoScores([rank('a', 4, 0.5), rank('b', 2, 0.5), rank('c', 2, 0.1)])).toEqual([100, 50, 40]);
    // Fewer hits but a better top score still ranks (and scores) no higher.
    expect(whoScores([rank('a', 20, 0.01), rank('b', 19, 1)])).toEqual([100, 95]);
  });

  it('matches wanted types to a site case-insensitively, in its own spelling', () => {
    const site = { name: 's', itemCount: 1, types: ['Movie', 'TVSeries'] };
    expect(matchingTypes(['movie', 'tvseries', 'Car'], site)).toEqual(['Movie', 'TVSeries']);
    expect(matchingTypes(['Car'], site)).toEqual([]);
  });
});
