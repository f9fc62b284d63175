import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { createMessageFactory } from '@askbus/contracts';
import type { Message, MessageBody } from '@askbus/contracts';
import { buildGateway } from './index';
import type { AskCall } from './dialect';
import { parseAsk } from './dialect';
import { parseSse, serveFakeRouter } from './testing';
import type { FakeRouter } from './testing';
import { V05Collector, V05Stream } from './v05';
import { askResponseViolations, askStreamViolations, violations } from './spec/nlweb05';

// Every answer askbus gives a protocol 0.5 client, success or failure, streamed or not, checked
// against the JSON Schema derived from nlweb-typespec's main.tsp (spec/nlweb-0.5.schema.json),
// on a real NATS with the fake router.
let nats: Awaited<ReturnType<typeof testNats>>;
let routerBus: Bus;
let gatewayBus: Bus;
let router: FakeRouter;
let app: FastifyInstance;
let keyed: FastifyInstance;

beforeAll(async () => {
  nats = await testNats();
  [routerBus, gatewayBus] = await Promise.all([testBus(nats.url, 'router'), testBus(nats.url, 'gateway')]);
  router = serveFakeRouter(routerBus);
  await routerBus.nc.flush();
  app = await buildGateway(gatewayBus, { keepAliveMs: 5_000, askTimeoutMs: 5_000 });
  keyed = await buildGateway(gatewayBus, { auth: { keys: [{ client: 'alice', key: 'key-of-alice-123' }] } });
});

afterAll(async () => {
  await Promise.all([app?.close(), keyed?.close()]);
  await Promise.all([routerBus?.drain(), gatewayBus?.drain()]);
  await nats?.stop();
});

interface Content {
  type: string;
  text?: string;
  resource?: { uri?: string; data: Record<string, unknown> | Record<string, unknown>[] };
}
interface Envelope {
  _meta?: Record<string, unknown>;
  content?: Content[];
}

/** The violations of one HTTP answer, whichever form it took. */
function answerViolations(res: LightMyRequestResponse): string[] {
  if (res.headers['content-type'] === 'text/event-stream') {
    return askStreamViolations(parseSse(res.body).map((e) => e.data));
  }
  return askResponseViolations(res.json());
}

const events = (res: LightMyRequestResponse): Envelope[] => parseSse(res.body).map((e) => e.data as Envelope);
const merged = (res: LightMyRequestResponse): Envelope =>
  res.headers['content-type'] === 'text/event-stream'
    ? {
        _meta: events(res).find((e) => e._meta)?._meta,
        content: events(res).flatMap((e) => e.content ?? []),
      }
    : res.json<Envelope>();
const texts = (b: Envelope) => (b.content ?? []).filter((c) => c.type === 'text').map((c) => c.text!);
const resources = (b: Envelope) =>
  (b.content ?? []).filter((c) => c.type === 'resource').map((c) => c.resource!);

const json = (payload: unknown): InjectOptions => ({
  method: 'POST',
  url: '/ask',
  headers: { 'content-type': 'application/json' },
  payload: JSON.stringify(payload),
});
const raw = (payload: string): InjectOptions => ({
  method: 'POST',
  url: '/ask',
  headers: { 'content-type': 'application/json' },
  payload,
});
const PAGE = { accept: 'text/event-stream' };

/** Every kind of 0.5 request askbus answers: each one's answer must validate. */
const SWEEP: [string, InjectOptions][] = [];
for (const streaming of [false, true]) {
  const s = streaming ? 'streamed' : 'JSON';
  for (const text of ['westerns', 'mixed', 'answer', 'empty', 'vague', 'fail', 'idle'])
    SWEEP.push([`${s} ${text}`, json({ query: { text }, return_response: { streaming } })]);
  SWEEP.push([
    `${s} type filter`,
    json({ query: { text: 'mixed', type: 'Car' }, return_response: { streaming } }),
  ]);
  SWEEP.push([
    `${s} generate`,
    json({
      query: { text: 'answer' },
      return_response: { streaming, mode: 'generate' },
      meta: { api_version: '0.5' },
    }),
  ]);
  for (const [name, q] of [
    ['details', 'tool=details&query=tell+me+about+Pale+Rider'],
    ['details not found', 'tool=details&query=tell+me+about+nothing'],
    ['compare', 'tool=compare&query=compare+Alien+and+Heat'],
    ['compare not found', 'tool=compare&query=compare+nothing+and+Heat'],
  ] as const)
    SWEEP.push([`${s} ${name}`, { url: `/ask?api_version=0.5&streaming=${streaming}&${q}` }]);
  SWEEP.push([`${s} bad field`, json({ query: { text: 42 }, return_response: { streaming } })]);
}
SWEEP.push(['minimal request', json({ query: { text: 'westerns' } })]);
SWEEP.push([
  'NLWeb_Core page GET',
  { url: '/ask?query=westerns&site=movies&max_results=50&mode=list', headers: PAGE },
]);
SWEEP.push([
  'page GET, vague',
  { url: '/ask?query=vague&site=movies&max_results=50&mode=list', headers: PAGE },
]);
SWEEP.push([
  'page GET, failing',
  { url: '/ask?query=fail&site=movies&max_results=50&mode=list', headers: PAGE },
]);
SWEEP.push([
  'page GET, bad max_results',
  { url: '/ask?query=x&site=movies&max_results=500&mode=list', headers: PAGE },
]);
SWEEP.push(['no query', json({ return_response: {} })]);
SWEEP.push(['broken JSON, 0.5 fields', raw('{"query": {"text": "westerns"}, "return_response": {')]);
SWEEP.push(['broken JSON, structured query', raw('{"query": {"text": "westerns"')]);
SWEEP.push([
  'broken JSON as text/plain',
  { ...raw('{"query": {"text": "x"'), headers: { 'content-type': 'text/plain' } },
]);

describe('every 0.5 answer validates against the spec', () => {
  it.each(SWEEP)('%s', async (name, request) => {
    const res = await app.inject(request);
    // The fake router's `fail` is the one 5xx (the router's own failure, passed on).
    if (!/\bfail/.test(name)) expect(res.statusCode).toBeLessThan(500);
    expect(answerViolations(res)).toEqual([]);
  });

  // A failure event inside a stream (after content) is checked below with the renderer itself:
  // the fake router fails before any content, which is answered with the HTTP status.
  it('the sweep covers successes and elicitations streamed and not, and failures', async () => {
    const seen = new Set<string>();
    for (const [, request] of SWEEP) {
      const res = await app.inject(request);
      const body = merged(res);
      const kind = body._meta?.error ? 'failure' : String(body._meta?.response_type);
      seen.add(`${kind} ${res.headers['content-type'] === 'text/event-stream' ? 'sse' : 'json'}`);
    }
    expect([...seen].sort()).toEqual(
      ['Answer json', 'Answer sse', 'Elicitation json', 'Elicitation sse', 'failure json'].sort(),
    );
  });

  it('the schema is not lenient: it refuses what askbus used to send', () => {
    const oldFailure = {
      _meta: { response_type: 'Failure', version: '0.5' },
      error: { code: 'INVALID_REQUEST', message: 'query is required' },
    };
    expect(askResponseViolations(oldFailure)).not.toEqual([]);
    const noText = {
      _meta: { version: '0.5' },
      content: [{ type: 'resource', resource: { data: { name: 'x' } } }],
    };
    expect(askResponseViolations(noText)).not.toEqual([]);
    expect(violations('AskResponse', noText)).toEqual([]); // the rule main.tsp cannot express
    const twoMetas = [
      { _meta: { response_type: 'Answer', version: '0.5' } },
      { _meta: { response_type: 'Elicitation', version: '0.5' } },
      { content: [{ type: 'text', text: 'Which city?' }] },
    ];
    expect(askStreamViolations(twoMetas)).toContain('2 events say a response_type; one _meta says it');
  });

  it('refusals of the access layer are 0.5 answers too', async () => {
    const res = await keyed.inject(
      json({ query: { text: 'westerns' }, return_response: { streaming: false } }),
    );
    expect(res.statusCode).toBe(401);
    expect(answerViolations(res)).toEqual([]);
    expect(res.json()).toMatchObject({ _meta: { error: { code: 'UNAUTHORIZED' } } });
  });

  it('without a router: 503, a 0.5 failure, streamed or not', async () => {
    router.sub.unsubscribe();
    await routerBus.nc.flush();
    try {
      for (const streaming of [false, true]) {
        const res = await app.inject(json({ query: { text: 'westerns' }, return_response: { streaming } }));
        expect(res.statusCode).toBe(503);
        expect(answerViolations(res)).toEqual([]);
      }
    } finally {
      router = serveFakeRouter(routerBus);
      await routerBus.nc.flush();
    }
  });
});

describe('which requests are 0.5', () => {
  it('the minimal request {"query":{"text":…}} is answered in 0.5, not v0.55', async () => {
    const res = await app.inject(json({ query: { text: 'westerns' } }));
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(res.body).not.toMatch(/^event:/m);
    expect(events(res)[0]).toEqual({
      _meta: { response_type: 'Answer', version: '0.5', request_id: expect.any(String) },
    });
    // v0.55 says so with prefer or meta.version.
    const v055 = await app.inject(json({ query: { text: 'westerns' }, meta: { version: '0.55' } }));
    expect(v055.body).toMatch(/^event: start\n/);
  });

  it('a broken JSON body of a 0.5 client is a 400 0.5 failure; any other, the 2025 error', async () => {
    const broken = await app.inject(raw('{"query": {"text": "westerns"}, "return_response": {'));
    expect(broken.statusCode).toBe(400);
    expect(broken.json()).toMatchObject({
      _meta: { version: '0.5', error: { code: 'INVALID_REQUEST', parameter: 'body' } },
      content: [{ type: 'text', text: expect.stringContaining('not valid JSON') }],
    });
    const flat = await app.inject(raw('{"query": "westerns",'));
    expect(flat.statusCode).toBe(400);
    expect(flat.json()).toMatchObject({ message_type: 'error', code: 'bad_request', parameter: 'body' });
    const v055 = await app.inject(raw('{"query": {"text": "x"}, "prefer": {'));
    expect(v055.json()).toMatchObject({ message_type: 'error', parameter: 'body' });
  });

  it("NLWeb_Core's page GET (exactly query, site, max_results, mode; EventSource) gets 0.5", async () => {
    const res = await app.inject({
      url: '/ask?query=westerns&site=movies&max_results=50&mode=list',
      headers: PAGE,
    });
    expect(res.statusCode).toBe(200);
    const ev = events(res);
    expect(ev[0]!._meta).toMatchObject({ response_type: 'Answer', version: '0.5' });
    expect(router.calls.at(-1)!.req).toMatchObject({
      query: 'westerns',
      site: ['movies'],
      maxResults: 50,
      mode: 'list',
    });
    // What the page keeps: resource items' data, each with a name, a url and a score.
    const shown = ev.flatMap((e) => (e._meta ? [] : (e.content ?? []))).filter((c) => c.type === 'resource');
    expect(shown.map((c) => (c.resource!.data as Record<string, unknown>).name)).toEqual([
      'Item 0',
      'Item 1',
      'Item 2',
    ]);
  });

  it("the page's clarifying question comes as a resource too (the page shows only resources)", async () => {
    const res = await app.inject({
      url: '/ask?query=vague&site=movies&max_results=50&mode=list',
      headers: PAGE,
    });
    const ev = events(res);
    expect(ev.filter((e) => e._meta).map((e) => e._meta!.response_type)).toEqual(['Elicitation']);
    const shown = ev.flatMap((e) => e.content ?? []).filter((c) => c.type === 'resource');
    expect(shown.map((c) => c.resource!.data)).toEqual([
      { '@type': 'Question', name: 'Which city are you in?', text: 'Which city are you in?' },
    ]);
  });

  it.each([
    ['a bare GET (curl)', '/ask?query=westerns&site=movies', {}],
    [
      'the same parameters without an SSE Accept',
      '/ask?query=westerns&site=movies&max_results=50&mode=list',
      {},
    ],
    ['an EventSource with a 2025 parameter', '/ask?query=westerns&site=movies&mode=list&prev=older', PAGE],
    [
      "askbus's own page (streaming, conversation_id)",
      '/ask?query=westerns&site=movies&mode=list&streaming=true',
      PAGE,
    ],
    [
      'api_version other than 0.5',
      '/ask?query=westerns&site=movies&mode=list&max_results=5&api_version=0.4',
      PAGE,
    ],
  ])('%s stays NLWeb 2025', async (_name, url, headers) => {
    const res = await app.inject({ url, headers });
    const first = parseSse(res.body)[0]?.data ?? res.json();
    expect(first).not.toHaveProperty('_meta.version', '0.5');
    expect(JSON.stringify(first)).toMatch(/message_type|results/);
  });

  it('api_version=0.5 on a GET asks for 0.5 explicitly', async () => {
    const res = await app.inject({ url: '/ask?query=westerns&api_version=0.5&streaming=false' });
    expect(res.json()).toMatchObject({ _meta: { response_type: 'Answer', version: '0.5' } });
  });
});

describe('tool answers in 0.5', () => {
  it('details: the text tells the item found, its resource is the schema.org item', async () => {
    const res = await app.inject({
      url: '/ask?api_version=0.5&streaming=false&tool=details&query=tell+me+about+Pale+Rider',
    });
    const body = res.json<Envelope>();
    expect(texts(body)).toEqual(["Pale Rider\ndirector: Pale Rider's director\ndatePublished: 1979"]);
    expect(texts(body).join(' ')).not.toMatch(/No results were found/);
    expect(resources(body)).toEqual([
      {
        uri: 'https://movies.example/pale-rider',
        data: expect.objectContaining({
          '@type': 'Movie',
          name: 'Pale Rider',
          url: 'https://movies.example/pale-rider',
        }),
      },
    ]);
  });

  it('details of nothing: the tool says so, no resource', async () => {
    const body = (
      await app.inject({
        url: '/ask?api_version=0.5&streaming=false&tool=details&query=tell+me+about+nothing',
      })
    ).json<Envelope>();
    expect(body.content).toEqual([{ type: 'text', text: 'Could not find any items matching "nothing".' }]);
  });

  it('compare: the comparison and verdict as text, both items typed, the table a schema.org Table', async () => {
    const res = await app.inject({
      url: '/ask?api_version=0.5&streaming=true&tool=compare&query=compare+Alien+and+Heat',
    });
    const body = merged(res);
    expect(texts(body)).toEqual(['Alien and Heat are both from 1979. Alien wins.']);
    const data = resources(body).map((r) => r.data as Record<string, unknown>);
    expect(data.map((d) => [d['@type'], d.name])).toEqual([
      ['Movie', 'Alien'],
      ['Movie', 'Heat'],
      ['Table', 'Alien and Heat compared'],
    ]);
  });

  const call = (): AskCall =>
    parseAsk({ query: {}, body: { query: { text: 'a picnic' }, return_response: {} } });
  const stamp = createMessageFactory('', 'q');
  const run = (bodies: MessageBody[]): { json: unknown; sse: unknown[] } => {
    const messages: Message[] = bodies.map(stamp);
    const collector = new V05Collector(call());
    for (const m of messages) collector.add(m);
    const stream = new V05Stream(call());
    const sse = messages.map((m) => stream.render(m)).join('') + stream.finish();
    return { json: collector.result().body, sse: parseSse(sse).map((e) => e.data) };
  };

  it('ensemble, substitutions and the results map: a text item and typed resources', () => {
    const ensemble = run([
      { message_type: 'begin-nlweb-response', query: 'a picnic' },
      {
        message_type: 'ensemble_result',
        '@type': 'EnsembleRecommendation',
        result: {
          success: true,
          ensemble_type: 'meal',
          recommendations: {
            theme: 'A summer picnic',
            items: [
              {
                category: 'main',
                name: 'Quiche',
                url: 'https://r.example/q',
                description: 'egg tart',
                why: 'travels well',
              },
            ],
            overall_tips: ['Pack ice.'],
          },
          total_items_retrieved: 12,
        },
      },
      { message_type: 'end-nlweb-response' },
    ]);
    expect(askResponseViolations(ensemble.json)).toEqual([]);
    expect(askStreamViolations(ensemble.sse)).toEqual([]);
    const body = ensemble.json as Envelope;
    expect(texts(body)).toEqual(['A summer picnic: main: Quiche. Pack ice.']);
    expect(resources(body)[0]!.data).toMatchObject({ '@type': 'ItemList', name: 'A summer picnic' });

    const subs = run([
      {
        message_type: 'substitution_suggestions',
        content: '<p>…</p>',
        substitution_data: {
          substitutions: [{ original_ingredient: 'butter', substitute: 'oil', ratio: '3/4', notes: '' }],
          general_tips: [],
          already_meets_requirements: false,
        },
        reference_recipes: [
          {
            name: 'Banana Bread',
            url: 'https://r.example/b',
            site: 'recipes',
            schema_object: { '@type': 'Recipe', name: 'Banana Bread' },
          },
        ],
      },
    ]);
    expect(askResponseViolations(subs.json)).toEqual([]);
    expect(texts(subs.json as Envelope)).toEqual(['Substitutions for Banana Bread: butter → oil (3/4).']);
    expect(resources(subs.json as Envelope)[0]!.data).toMatchObject({
      '@type': 'Recipe',
      name: 'Banana Bread',
    });

    const map = run([
      {
        message_type: 'results_map',
        '@type': 'LocationMap',
        locations: [{ title: 'Cafe', address: '1 Main St' }],
      },
    ]);
    expect(askResponseViolations(map.json)).toEqual([]);
    expect(resources(map.json as Envelope)[0]!.data).toMatchObject({
      '@type': 'ItemList',
      itemListElement: [{ '@type': 'Place', name: 'Cafe', address: '1 Main St' }],
    });
  });

  it('a failure after results is one more event, and the stream still validates', () => {
    const { sse } = run([
      { message_type: 'result', content: [] },
      {
        message_type: 'result',
        content: [
          {
            '@type': 'Item',
            url: 'https://m.example/1',
            name: 'Heat',
            site: 'movies',
            siteUrl: 'movies',
            score: 80,
            description: 'a heist film',
            schema_object: {
              '@type': 'Movie',
              name: 'Heat',
              image: [{ '@type': 'ImageObject', url: 'https://m.example/heat.jpg' }],
            },
          },
        ],
      },
      { message_type: 'error', error: 'the ranker died', code: 'unavailable' },
    ]);
    expect(askStreamViolations(sse)).toEqual([]);
    const ev = sse as Envelope[];
    expect(ev.map((e) => Object.keys(e).sort().join('+'))).toEqual(['_meta', 'content', '_meta+content']);
    expect(ev[2]!._meta).toMatchObject({ error: { code: 'UNAVAILABLE' }, 'nlweb/streaming_status': 'error' });
    // An ImageObject image becomes its URL: 0.5 pages put `image` into an <img src>.
    expect((ev[1]!.content![0]!.resource!.data as Record<string, unknown>).image).toBe(
      'https://m.example/heat.jpg',
    );
  });

  it('a question after results is a text item: the answer stays an Answer with one _meta', () => {
    const { json: body, sse } = run([
      { message_type: 'no_results', content: 'Nothing yet.' },
      { message_type: 'ask_user', content: 'Which city?' },
    ]);
    expect(askStreamViolations(sse)).toEqual([]);
    expect((body as Envelope)._meta).toMatchObject({ response_type: 'Answer' });
    expect(texts(body as Envelope)).toEqual(['Nothing yet.', 'Which city?']);
  });
});
