import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { AskRequest } from '@askbus/contracts';
import { buildGateway } from './index';
import { fakeItem, parseSse, serveFakeRouter } from './testing';
import type { FakeRouter } from './testing';
import { itemResource } from './v05';

// NLWeb protocol 0.5 on POST /ask, against a real NATS with the fake router.
let nats: Awaited<ReturnType<typeof testNats>>;
let routerBus: Bus;
let gatewayBus: Bus;
let router: FakeRouter;
let app: FastifyInstance;

beforeAll(async () => {
  nats = await testNats();
  [routerBus, gatewayBus] = await Promise.all([testBus(nats.url, 'router'), testBus(nats.url, 'gateway')]);
  router = serveFakeRouter(routerBus);
  await routerBus.nc.flush();
  app = await buildGateway(gatewayBus, { keepAliveMs: 5_000, askTimeoutMs: 5_000 });
});

afterAll(async () => {
  await app?.close();
  await Promise.all([routerBus?.drain(), gatewayBus?.drain()]);
  await nats?.stop();
});

const lastCall = () => router.calls.at(-1)!;

type Body = Record<string, unknown>;
const ask05 = (query: Body, more: Body = {}) => ({
  query,
  return_response: { streaming: false },
  ...more,
});
const post = (payload: unknown) => app.inject({ method: 'POST', url: '/ask', payload: payload as Body });

interface Envelope {
  _meta?: Record<string, unknown> & { error?: { code: string; message: string; parameter?: string } };
  content?: { type: string; text?: string; resource?: { uri?: string; data: Record<string, unknown> } }[];
}
const events = (body: string) => parseSse(body).map((e) => e.data as Envelope);
const texts = (b: Envelope) => (b.content ?? []).filter((c) => c.type === 'text').map((c) => c.text);
const names = (b: Envelope) =>
  (b.content ?? []).filter((c) => c.type === 'resource').map((c) => c.resource!.data.name);

describe('protocol 0.5 request', () => {
  it('maps query, context, return_response and meta onto the one AskRequest', async () => {
    const res = await post({
      query: {
        text: 'westerns',
        site: ['movies'],
        type: 'Movie',
        location: 'Seattle',
        price: 'under $20',
        datePublished: 1990,
        genre: ['western', 'drama'],
        nested: { ignored: true },
      },
      context: { prev: ['old films', ''], text: 'I like cowboys', memory: ['no horror'] },
      return_response: { streaming: false, mode: 'list, summarize', lang: 'en', client_type: 'web' },
      meta: { conversation_id: 'conv-1', api_version: '0.5', request_id: 'req_map' },
    });
    expect(res.statusCode).toBe(200);
    const req = lastCall().req;
    expect(req).toEqual({
      queryId: 'req_map',
      query: 'westerns',
      site: ['movies'],
      prev: ['old films'],
      mode: 'summarize',
      conversationId: 'conv-1',
      maxResults: 10,
      minScore: 51,
      filters: {
        type: 'Movie',
        location: 'Seattle',
        price: 'under $20',
        datePublished: 1990,
        genre: ['western', 'drama'],
      },
    });
    // Nothing below the gateway learns the dialect: the request is a plain AskRequest.
    expect(AskRequest.strict().safeParse(req).success).toBe(true);
  });

  it('a body with meta.api_version 0.5 (and no return_response) is 0.5 too; defaults apply', async () => {
    const res = await post({ query: { text: 'westerns' }, meta: { api_version: '0.5.3' } });
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(events(res.body)[0]!._meta).toMatchObject({ response_type: 'Answer', version: '0.5' });
    expect(lastCall().req).toMatchObject({ site: ['all'], prev: [], mode: 'list', conversationId: '' });
    expect(lastCall().req.filters).toBeUndefined();
  });
});

describe('one AskRequest, one Message stream, three dialects', () => {
  it('the same question as 2025 parameters, a v0.55 body and a 0.5 body reaches the router alike', async () => {
    const seen: unknown[] = [];
    const urls: string[][] = [];
    const legacy = await app.inject({
      url: '/ask?query=westerns&site=movies&prev=older&mode=summarize&conversation_id=c3&streaming=false',
    });
    seen.push(lastCall().req);
    urls.push(legacy.json<{ results: { url: string }[] }>().results.map((r) => r.url));
    const v055 = await post({
      query: { text: 'westerns', site: 'movies' },
      context: { prev: ['older'] },
      prefer: { mode: 'summarize', streaming: false },
      meta: { version: '0.55' },
      conversation_id: 'c3',
    });
    seen.push(lastCall().req);
    urls.push(v055.json<{ results: { url: string }[] }>().results.map((r) => r.url));
    const v05 = await post({
      query: { text: 'westerns', site: ['movies'] },
      context: { prev: ['older'] },
      return_response: { mode: 'summarize', streaming: false },
      meta: { conversation_id: 'c3' },
    });
    seen.push(lastCall().req);
    urls.push(
      v05
        .json<Envelope>()
        .content!.filter((c) => c.type === 'resource')
        .map((c) => c.resource!.uri!),
    );
    const withoutId = seen.map((r) => ({ ...(r as Body), queryId: undefined }));
    expect(withoutId[1]).toEqual(withoutId[0]);
    expect(withoutId[2]).toEqual(withoutId[0]);
    expect(urls[1]).toEqual(urls[0]);
    expect(urls[2]).toEqual(urls[0]);
  });
});

describe('protocol 0.5 answer, non-streaming', () => {
  it('is {_meta, content}: the router summary as text, the ranked schema.org items as resources', async () => {
    const res = await post(
      ask05({ text: 'westerns', site: ['movies'] }, { meta: { conversation_id: 'c1' } }),
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json<Envelope>();
    const queryId = res.headers['x-query-id'];
    expect(body._meta).toEqual({
      response_type: 'Answer',
      version: '0.5',
      conversation_id: 'c1',
      request_id: queryId,
    });
    expect(body.content![0]).toEqual({ type: 'text', text: 'A summary.' });
    expect(body.content!.slice(1)).toEqual([0, 1, 2].map((n) => itemResource(fakeItem(n))));
    expect(body.content![1]!.resource).toEqual({
      uri: 'https://movies.example/item/0',
      data: {
        '@type': 'Movie',
        name: 'Item 0',
        url: 'https://movies.example/item/0',
        score: 90,
        site: 'movies',
        relevance: 'the description of item 0',
      },
    });
  });

  it('composes the text item from the results when the router sent no summary', async () => {
    const body = (await post(ask05({ text: 'mixed' }))).json<Envelope>();
    expect(texts(body)).toEqual(['Found 2 results for "mixed": Item 0; Car 1.']);
    expect(names(body)).toEqual(['Item 0', 'Car 1']);
  });

  it('applies query.type to the results it renders (case-insensitive), and passes it on', async () => {
    const body = (await post(ask05({ text: 'mixed', type: 'car' }))).json<Envelope>();
    expect(names(body)).toEqual(['Car 1']);
    expect(texts(body)).toEqual(['Found 1 result for "mixed": Car 1.']);
    expect(lastCall().req.filters).toEqual({ type: 'car' });
  });

  it('a generated answer is the text, its items resources; no_results is the text', async () => {
    const answer = (
      await post(ask05({ text: 'answer' }, { return_response: { streaming: false, mode: 'generate' } }))
    ).json<Envelope>();
    expect(texts(answer)).toEqual(['Item 0 is the one.']);
    expect(names(answer)).toEqual(['Item 0']);
    expect(lastCall().req.mode).toBe('generate');
    const empty = (await post(ask05({ text: 'empty' }))).json<Envelope>();
    expect(empty.content).toEqual([{ type: 'text', text: 'No results were found for "empty".' }]);
  });

  it('ask_user is an Elicitation whose question is the text; the answer in context.prev continues', async () => {
    const first = await post(ask05({ text: 'vague' }, { meta: { conversation_id: 'conv-e' } }));
    expect(first.statusCode).toBe(200);
    const q = first.json<Envelope>();
    expect(q._meta).toMatchObject({
      response_type: 'Elicitation',
      version: '0.5',
      conversation_id: 'conv-e',
    });
    // The question as text, and as a schema.org Question for pages that show only resources.
    expect(q.content).toEqual([
      { type: 'text', text: 'Which city are you in?' },
      {
        type: 'resource',
        resource: {
          data: { '@type': 'Question', name: 'Which city are you in?', text: 'Which city are you in?' },
        },
      },
    ]);

    const next = await post(
      ask05({ text: 'Seattle' }, { context: { prev: ['vague'] }, meta: { conversation_id: 'conv-e' } }),
    );
    const a = next.json<Envelope>();
    expect(a._meta).toMatchObject({ response_type: 'Answer', conversation_id: 'conv-e' });
    expect(names(a)).toHaveLength(3);
    expect(lastCall().req).toMatchObject({ query: 'Seattle', prev: ['vague'], conversationId: 'conv-e' });
  });

  it('a router failure is a failure with the HTTP status: _meta.error and the message as text', async () => {
    const res = await post(ask05({ text: 'fail' }, { meta: { request_id: 'req-fail' } }));
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({
      _meta: {
        version: '0.5',
        request_id: 'req-fail',
        error: { code: 'INTERNAL_ERROR', message: 'the fake router broke' },
      },
      content: [{ type: 'text', text: 'the fake router broke' }],
    });
  });
});

describe('protocol 0.5 answer, streaming', () => {
  it('sends _meta, then content events as results arrive, in the 0.5 envelope', async () => {
    const res = await post({ query: { text: 'westerns' }, return_response: { mode: 'summarize' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    const blocks = res.body.split('\n\n').filter((b) => b !== '');
    for (const b of blocks) expect(b).toMatch(/^data: \{.*\}$/);
    const ev = events(res.body);
    expect(ev[0]).toEqual({
      _meta: { response_type: 'Answer', version: '0.5', request_id: res.headers['x-query-id'] },
    });
    expect(ev.slice(1)).toEqual([
      { content: [itemResource(fakeItem(0)), itemResource(fakeItem(1))] },
      { content: [{ type: 'text', text: 'A summary.' }] },
      { content: [itemResource(fakeItem(2))] },
    ]);
  });

  it('ends with a composed text item when the router sent none', async () => {
    const ev = events((await post({ query: { text: 'mixed' }, return_response: {} })).body);
    expect(ev.at(-1)).toEqual({
      content: [{ type: 'text', text: 'Found 2 results for "mixed": Item 0; Car 1.' }],
    });
  });

  it('an Elicitation sends one _meta, saying Elicitation, then the question', async () => {
    const ev = events((await post({ query: { text: 'vague' }, return_response: { streaming: true } })).body);
    expect(ev.filter((e) => e._meta).map((e) => e._meta!.response_type)).toEqual(['Elicitation']);
    expect(ev).toEqual([
      { _meta: { response_type: 'Elicitation', version: '0.5', request_id: expect.any(String) } },
      {
        content: [
          { type: 'text', text: 'Which city are you in?' },
          {
            type: 'resource',
            resource: {
              data: { '@type': 'Question', name: 'Which city are you in?', text: 'Which city are you in?' },
            },
          },
        ],
      },
    ]);
  });

  it('a router failure before any content is still the HTTP status and a failure body', async () => {
    // The _meta waits for the first content (to say Answer or Elicitation), so nothing was sent.
    const res = await post({ query: { text: 'fail' }, return_response: {} });
    expect(res.statusCode).toBe(500);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({
      _meta: {
        version: '0.5',
        request_id: res.headers['x-query-id'],
        error: { code: 'INTERNAL_ERROR', message: 'the fake router broke' },
      },
      content: [{ type: 'text', text: 'the fake router broke' }],
    });
  });
});

describe('protocol 0.5 without a router', () => {
  it('is a 503 Failure, streaming or not', async () => {
    router.sub.unsubscribe();
    await routerBus.nc.flush();
    try {
      for (const streaming of [false, true]) {
        const res = await post({ query: { text: 'westerns' }, return_response: { streaming } });
        expect(res.statusCode).toBe(503);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.json()).toMatchObject({
          _meta: {
            version: '0.5',
            error: { code: 'UNAVAILABLE', message: expect.stringContaining('router is not available') },
          },
          content: [{ type: 'text', text: expect.stringContaining('router is not available') }],
        });
        expect(res.json<Envelope>()._meta!.response_type).toBeUndefined();
      }
    } finally {
      router = serveFakeRouter(routerBus);
      await routerBus.nc.flush();
    }
  });
});

describe('malformed 0.5 bodies are a 400 Failure naming the field', () => {
  const cases: [string, unknown, string][] = [
    ['no query', { return_response: {} }, 'query'],
    ['query as text', { query: 'westerns', return_response: {} }, 'query'],
    ['no query.text', { query: { site: ['movies'] }, return_response: {} }, 'query.text'],
    ['blank query.text', { query: { text: ' ' }, meta: { api_version: '0.5' } }, 'query.text'],
    ['query.text a number', { query: { text: 42 }, return_response: {} }, 'query.text'],
    ['bad site name', { query: { text: 'x', site: ['movies', 'a/b'] }, return_response: {} }, 'query.site'],
    ['query.type an object', { query: { text: 'x', type: { a: 1 } }, return_response: {} }, 'query.type'],
    ['query.location a list', { query: { text: 'x', location: [1] }, return_response: {} }, 'query.location'],
    ['context not an object', { query: { text: 'x' }, context: 'hi', return_response: {} }, 'context'],
    [
      'context.prev not a list',
      { query: { text: 'x' }, context: { prev: 'a' }, return_response: {} },
      'context.prev',
    ],
    [
      'context.prev entry',
      { query: { text: 'x' }, context: { prev: ['a', 1] }, return_response: {} },
      'context.prev',
    ],
    [
      'context.memory',
      { query: { text: 'x' }, context: { memory: 'vegan' }, return_response: {} },
      'context.memory',
    ],
    ['return_response a list', { query: { text: 'x' }, return_response: [] }, 'return_response'],
    [
      'streaming',
      { query: { text: 'x' }, return_response: { streaming: 'often' } },
      'return_response.streaming',
    ],
    ['mode', { query: { text: 'x' }, return_response: { mode: 'poetry' } }, 'return_response.mode'],
    [
      'client_type',
      { query: { text: 'x' }, return_response: { client_type: 'toaster' } },
      'return_response.client_type',
    ],
    ['meta not an object', { query: { text: 'x' }, return_response: {}, meta: 5 }, 'meta'],
    [
      'conversation_id',
      { query: { text: 'x' }, return_response: {}, meta: { conversation_id: 7 } },
      'meta.conversation_id',
    ],
    [
      'api_version a number',
      { query: { text: 'x' }, return_response: {}, meta: { api_version: 0.5 } },
      'meta.api_version',
    ],
  ];
  it.each(cases)('%s', async (_name, payload, parameter) => {
    const before = router.calls.length;
    const res = await post(payload);
    expect(res.statusCode).toBe(400);
    const body = res.json<Envelope>();
    expect(body._meta).toMatchObject({ version: '0.5', error: { code: 'INVALID_REQUEST', parameter } });
    expect(body._meta!.error!.message).toContain(parameter);
    expect(body.content).toEqual([{ type: 'text', text: body._meta!.error!.message }]);
    expect(router.calls.length).toBe(before);
  });

  it('echoes the request and conversation ids in the Failure', async () => {
    const res = await post({
      query: {},
      meta: { api_version: '0.5', conversation_id: 'c9', request_id: 'r9' },
    });
    expect(res.json()).toMatchObject({ _meta: { conversation_id: 'c9', request_id: 'r9' } });
  });
});

describe('protocol 0.5 over real HTTP', () => {
  it('streams the first result before the router has finished', async () => {
    const live = await buildGateway(gatewayBus, { keepAliveMs: 5_000 });
    await live.listen({ port: 0, host: '127.0.0.1' });
    try {
      const addr = live.server.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      const client = new AbortController();
      const res = await fetch(`http://127.0.0.1:${port}/ask`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: { text: 'slow' },
          meta: { api_version: '0.5', request_id: 'q_first05' },
        }),
        signal: client.signal,
      });
      expect(res.headers.get('content-type')).toBe('text/event-stream');
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      while (!text.includes('"type":"resource"')) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended early: ${text}`);
        text += decoder.decode(value, { stream: true });
      }
      const ev = events(text.slice(0, text.lastIndexOf('\n\n') + 2));
      expect(ev).toEqual([
        { _meta: { response_type: 'Answer', version: '0.5', request_id: 'q_first05' } },
        { content: [itemResource(fakeItem(0))] },
      ]);
      client.abort();
      await expect.poll(() => router.aborted, { timeout: 3_000 }).toContain('q_first05');
    } finally {
      await live.close();
    }
  });
});
