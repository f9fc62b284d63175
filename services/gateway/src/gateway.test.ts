import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Bus } from '@askbus/bus';
import { parseTraceparent } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { buildGateway } from './index';
import { FAKE_SITES, fakeItem, parseSse, serveFakeRetriever, serveFakeRouter } from './testing';
import type { FakeRouter, SseEvent, Subscription } from './testing';

let nats: Awaited<ReturnType<typeof testNats>>;
let routerBus: Bus;
let retrieverBus: Bus;
let gatewayBus: Bus;
let router: FakeRouter;
let retriever: Subscription;
let app: FastifyInstance;

beforeAll(async () => {
  nats = await testNats();
  [routerBus, retrieverBus, gatewayBus] = await Promise.all([
    testBus(nats.url, 'router'),
    testBus(nats.url, 'retriever'),
    testBus(nats.url, 'gateway'),
  ]);
  router = serveFakeRouter(routerBus);
  retriever = serveFakeRetriever(retrieverBus);
  await routerBus.nc.flush();
  await retrieverBus.nc.flush();
  app = await buildGateway(gatewayBus, { keepAliveMs: 40, askTimeoutMs: 5_000, version: '9.9.9' });
});

afterAll(async () => {
  await app?.close();
  await Promise.all([routerBus?.drain(), retrieverBus?.drain(), gatewayBus?.drain()]);
  await nats?.stop();
});

const lastCall = () => router.calls.at(-1)!;
const types = (events: SseEvent[]) => events.map((e) => (e.data as { message_type?: string }).message_type);

/** Stops serving a subject for the duration of `fn`, then serves it again. */
async function without(which: 'router' | 'retriever', fn: () => Promise<void>): Promise<void> {
  const [bus, sub] = which === 'router' ? [routerBus, router.sub] : [retrieverBus, retriever];
  sub.unsubscribe();
  await bus.nc.flush();
  try {
    await fn();
  } finally {
    if (which === 'router') router = serveFakeRouter(routerBus);
    else retriever = serveFakeRetriever(retrieverBus);
    await bus.nc.flush();
  }
}

describe('2025 SSE', () => {
  it('streams every message as one data: line with the SSE headers', async () => {
    const res = await app.inject({ method: 'GET', url: '/ask?query=westerns&site=movies' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['connection']).toBe('keep-alive');
    expect(res.headers['x-accel-buffering']).toBe('no');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['x-query-id']).toMatch(/^[0-9a-f]{32}$/);
    // Keep-alive comments may come in between (40 ms here) when the machine is busy.
    const blocks = res.body.split('\n\n').filter((b) => b !== '' && b !== ': keepalive');
    for (const b of blocks) expect(b).toMatch(/^data: \{.*\}$/);
    expect(res.body.endsWith('\n\n')).toBe(true);
    const events = parseSse(res.body);
    expect(types(events)).toEqual([
      'begin-nlweb-response',
      'intermediate_message',
      'result',
      'result',
      'result',
      'end-nlweb-response',
    ]);
    expect(events.every((e) => e.event === 'message')).toBe(true);
    const items = events.flatMap((e) => {
      const m = e.data as { message_type: string; content: unknown };
      return m.message_type === 'result' && Array.isArray(m.content) ? m.content : [];
    });
    expect(items).toEqual([fakeItem(0), fakeItem(1), fakeItem(2)]);
    expect(lastCall().req).toMatchObject({
      query: 'westerns',
      site: ['movies'],
      mode: 'list',
      maxResults: 10,
      minScore: 51,
    });
    expect(lastCall().queryId).toBe(res.headers['x-query-id']);
  });

  it('maps the 2025 parameters onto the AskRequest', async () => {
    const qs = new URLSearchParams({
      query: 'q',
      site: 'my site,cars',
      prev: JSON.stringify([{ query: 'first' }, 'second']),
      generate_mode: 'summarize',
      conversation_id: 'conv-1',
      max_results: '3',
      min_score: '40',
      query_id: 'client_query_1',
      tool: 'search',
    });
    const res = await app.inject({ method: 'GET', url: `/ask?${qs}` });
    expect(res.statusCode).toBe(200);
    expect(lastCall().req).toEqual({
      queryId: 'client_query_1',
      query: 'q',
      site: ['my_site', 'cars'],
      prev: ['first', 'second'],
      mode: 'summarize',
      conversationId: 'conv-1',
      maxResults: 3,
      minScore: 40,
      tool: 'search',
    });
    expect(lastCall().queryId).toBe('client_query_1');
  });

  it('mode wins over generate_mode, none means list, and a bad query_id gets a fresh one', async () => {
    await app.inject({ url: '/ask?query=q&mode=none&generate_mode=generate&query_id=not.a.token' });
    expect(lastCall().req.mode).toBe('list');
    expect(lastCall().queryId).toMatch(/^[0-9a-f]{32}$/);
    await app.inject({ url: '/ask?query=q&mode=generate&generate_mode=summarize' });
    expect(lastCall().req.mode).toBe('generate');
  });

  it('sends keepalive comments while the router is quiet', async () => {
    const res = await app.inject({ url: '/ask?query=idle' });
    expect(res.body).toContain(': keepalive\n\n');
    expect(types(parseSse(res.body))).toEqual(['begin-nlweb-response', 'end-nlweb-response']);
  });

  it('Accept: text/event-stream and stream=1 force streaming', async () => {
    const a = await app.inject({
      url: '/ask?query=q&streaming=false',
      headers: { accept: 'text/event-stream' },
    });
    expect(a.headers['content-type']).toBe('text/event-stream');
    const b = await app.inject({ url: '/ask?query=q&streaming=0&stream=1' });
    expect(b.headers['content-type']).toBe('text/event-stream');
  });

  it('passes a valid incoming traceparent on, and starts a trace otherwise', async () => {
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await app.inject({ url: '/ask?query=q', headers: { traceparent: tp } });
    expect(parseTraceparent(lastCall().traceparent)?.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    await app.inject({ url: '/ask?query=q', headers: { traceparent: 'garbage' } });
    expect(parseTraceparent(lastCall().traceparent)).toBeDefined();
    expect(parseTraceparent(lastCall().traceparent)?.traceId).not.toBe('0af7651916cd43dd8448eb211c80319c');
  });
});

describe('non-streaming JSON', () => {
  it('answers one body with query_id, conversation_id, results and messages', async () => {
    const res = await app.inject({
      url: '/ask?query=cars&site=cars&streaming=false&conversation_id=c9&query_id=q_nonstream',
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    expect(body.query_id).toBe('q_nonstream');
    expect(body.conversation_id).toBe('c9');
    expect(body.results).toEqual([fakeItem(0), fakeItem(1), fakeItem(2)]);
    expect(body.messages.map((m: { message_type: string }) => m.message_type)).toEqual([
      'begin-nlweb-response',
      'intermediate_message',
      'result',
      'result',
      'result',
      'end-nlweb-response',
    ]);
    expect(body.messages[3]).toMatchObject({ '@type': 'Summary', content: 'A summary.' });
  });

  it('merges a JSON POST body over the query string', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/ask?site=movies&max_results=7',
      payload: { query: 'from body', streaming: false, max_results: 3, prev: ['a', { query: 'b' }] },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toHaveLength(3);
    expect(lastCall().req).toMatchObject({
      query: 'from body',
      site: ['movies'],
      maxResults: 3,
      prev: ['a', 'b'],
    });
  });

  it('reads application/x-www-form-urlencoded bodies', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/ask',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'query=form+query&site=cars&streaming=false&prev=one%2Ctwo&mode=summarize',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toHaveLength(3);
    expect(lastCall().req).toMatchObject({
      query: 'form query',
      site: ['cars'],
      prev: ['one', 'two'],
      mode: 'summarize',
    });
  });

  it('reads JSON sent as text/plain', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/ask',
      headers: { 'content-type': 'text/plain' },
      payload: JSON.stringify({ query: 'plain', streaming: 'false' }),
    });
    expect(res.statusCode).toBe(200);
    expect(lastCall().req.query).toBe('plain');
  });
});

describe('v0.55 structured POST', () => {
  const body = (prefer: Record<string, unknown>) => ({
    query: { text: 'science fiction', site: 'movies' },
    context: { prev: ['older question'] },
    prefer,
    meta: { version: '0.55' },
  });

  it('answers with start, indexed result events, unnamed others, and complete', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/ask',
      payload: body({ streaming: true, mode: 'summarize' }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    const events = parseSse(res.body);
    expect(events.map((e) => e.event)).toEqual([
      'start',
      'message',
      'result',
      'result',
      'message',
      'result',
      'complete',
    ]);
    expect(events[0]!.data).toEqual({
      _meta: { version: '0.55', response_type: 'answer', mode: 'summarize', site: 'movies' },
      streaming: true,
    });
    expect(res.body).toMatch(/^event: start\ndata: /);
    const results = events.filter((e) => e.event === 'result').map((e) => e.data);
    expect(results).toEqual([
      { index: 0, item: fakeItem(0) },
      { index: 1, item: fakeItem(1) },
      { index: 2, item: fakeItem(2) },
    ]);
    expect(events[4]!.data).toMatchObject({ message_type: 'result', '@type': 'Summary' });
    expect(events.at(-1)!.data).toEqual({ _meta: { version: '0.55' } });
    expect(lastCall().req).toMatchObject({
      query: 'science fiction',
      site: ['movies'],
      prev: ['older question'],
      mode: 'summarize',
    });
  });

  it('answers non-streaming with _meta, results and messages', async () => {
    const res = await app.inject({ method: 'POST', url: '/ask', payload: body({ streaming: false }) });
    expect(res.statusCode).toBe(200);
    const json = res.json();
    expect(json._meta).toEqual({ version: '0.55', response_type: 'answer', mode: 'list', site: 'movies' });
    expect(json.results).toEqual([fakeItem(0), fakeItem(1), fakeItem(2)]);
    expect(json.messages).toHaveLength(6);
  });

  it('marks complete with _meta.error after a router failure', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/ask',
      payload: { query: { text: 'fail' }, meta: { version: '0.55' } },
    });
    const events = parseSse(res.body);
    expect(events.map((e) => e.event)).toEqual(['start', 'message', 'complete']);
    expect(events[1]!.data).toMatchObject({ message_type: 'error', code: 'internal', status: 500 });
    expect(events[2]!.data).toEqual({ _meta: { version: '0.55', error: true } });
  });
});

describe('bad input is a 400 naming the parameter', () => {
  const cases: [string, InjectOptions, string][] = [
    ['missing query', { url: '/ask?site=movies' }, 'query'],
    ['blank query', { url: '/ask?query=%20%20' }, 'query'],
    ['max_results=banana', { url: '/ask?query=x&max_results=banana' }, 'max_results'],
    ['max_results out of range', { url: '/ask?query=x&max_results=0' }, 'max_results'],
    ['min_score not a number', { url: '/ask?query=x&min_score=lots' }, 'min_score'],
    ['bad mode', { url: '/ask?query=x&mode=poetry' }, 'mode'],
    ['bad generate_mode', { url: '/ask?query=x&generate_mode=poetry' }, 'generate_mode'],
    ['bad site', { url: '/ask?query=x&site=a/b' }, 'site'],
    [
      'malformed JSON',
      { method: 'POST', url: '/ask', headers: { 'content-type': 'application/json' }, payload: '{"query": ' },
      'body',
    ],
    [
      'empty JSON body',
      { method: 'POST', url: '/ask', headers: { 'content-type': 'application/json' }, payload: '' },
      'body',
    ],
    ['JSON array body', { method: 'POST', url: '/ask', payload: [1, 2] }, 'body'],
    [
      'form body without query',
      {
        method: 'POST',
        url: '/ask',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'site=movies&streaming=false',
      },
      'query',
    ],
    [
      'form body with max_results=banana',
      {
        method: 'POST',
        url: '/ask',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'query=x&max_results=banana',
      },
      'max_results',
    ],
    [
      'v0.55 body without text',
      { method: 'POST', url: '/ask', payload: { query: { site: 'movies' }, meta: { version: '0.55' } } },
      'query.text',
    ],
    [
      'v0.55 bad prefer.mode',
      { method: 'POST', url: '/ask', payload: { query: { text: 'x' }, prefer: { mode: 'x' } } },
      'prefer.mode',
    ],
    [
      'text body that is not JSON',
      { method: 'POST', url: '/ask', headers: { 'content-type': 'text/plain' }, payload: 'hello' },
      'body',
    ],
  ];

  it.each(cases)('%s', async (_name, request, parameter) => {
    const calls = router.calls.length;
    const res = await app.inject(request);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    expect(body).toMatchObject({ message_type: 'error', code: 'bad_request', parameter });
    expect(typeof body.error).toBe('string');
    expect(body.error.length).toBeGreaterThan(5);
    expect(router.calls.length).toBe(calls);
  });

  it('stays healthy afterwards, and unknown routes are a JSON 404', async () => {
    expect((await app.inject({ url: '/health' })).statusCode).toBe(200);
    const res = await app.inject({ url: '/nope?x=1' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({
      message_type: 'error',
      code: 'not_found',
      error: 'no route for GET /nope',
    });
  });
});

describe('router failures', () => {
  it('router absent: streamed begin, error 503, end with error', async () => {
    await without('router', async () => {
      const res = await app.inject({ url: '/ask?query=q' });
      expect(res.statusCode).toBe(200);
      const events = parseSse(res.body);
      expect(types(events)).toEqual(['begin-nlweb-response', 'error', 'end-nlweb-response']);
      expect(events[1]!.data).toMatchObject({ message_type: 'error', code: 'no_responders', status: 503 });
      expect(events[2]!.data).toMatchObject({ error: true, sender_type: 'assistant' });
      expect((events[2]!.data as { message_id: string }).message_id).toMatch(/^gateway-/);
    });
  });

  it('router absent: non-streaming is a 503 with the error JSON', async () => {
    await without('router', async () => {
      const res = await app.inject({ url: '/ask?query=q&streaming=false' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ message_type: 'error', code: 'no_responders', status: 503 });
    });
  });

  it('a router error mid-stream keeps the router begin and ends with error', async () => {
    const res = await app.inject({ url: '/ask?query=fail' });
    const events = parseSse(res.body);
    expect(types(events)).toEqual(['begin-nlweb-response', 'error', 'end-nlweb-response']);
    expect(events[1]!.data).toMatchObject({ code: 'internal', status: 500, error: 'the fake router broke' });
    const failed = await app.inject({ url: '/ask?query=fail&streaming=false' });
    expect(failed.statusCode).toBe(500);
  });

  it('a router that takes too long is a 504 (and is cancelled)', async () => {
    const quick = await buildGateway(gatewayBus, { askTimeoutMs: 200 });
    try {
      const res = await quick.inject({ url: '/ask?query=hang&streaming=false&query_id=q_hang' });
      expect(res.statusCode).toBe(504);
      expect(res.json()).toMatchObject({ code: 'deadline_exceeded', status: 504 });
      const sse = await quick.inject({ url: '/ask?query=hang' });
      const events = parseSse(sse.body);
      expect(types(events)).toEqual(['begin-nlweb-response', 'error', 'end-nlweb-response']);
      expect(events[1]!.data).toMatchObject({ status: 504 });
    } finally {
      await quick.close();
    }
    await expect.poll(() => router.aborted.includes('q_hang'), { timeout: 2_000 }).toBe(true);
  });
});

describe('/sites, /health, /ready, /', () => {
  it('/sites lists names and details', async () => {
    const res = await app.inject({ url: '/sites' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ 'message-type': 'sites', sites: ['movies', 'cars'], details: FAKE_SITES });
  });

  it('/sites?streaming=true sends one SSE data event', async () => {
    const res = await app.inject({ url: '/sites?streaming=true' });
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(parseSse(res.body)).toEqual([
      { event: 'message', data: { 'message-type': 'sites', sites: ['movies', 'cars'], details: FAKE_SITES } },
    ]);
  });

  it('/sites without a retriever is a 503', async () => {
    await without('retriever', async () => {
      const res = await app.inject({ url: '/sites' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ message_type: 'error', code: 'no_responders' });
    });
  });

  it('/health', async () => {
    const res = await app.inject({ url: '/health' });
    const body = res.json();
    expect(body).toMatchObject({ status: 'healthy', version: '9.9.9' });
    expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
    expect(body.uptime_seconds).toBeGreaterThanOrEqual(0);
  });

  it('/ready is 200 with NATS and a retriever, 503 naming the retriever without one', async () => {
    const ok = await app.inject({ url: '/ready' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ status: 'ready', checks: { nats: true, retriever: true } });
    await without('retriever', async () => {
      const res = await app.inject({ url: '/ready' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({
        status: 'not_ready',
        checks: { nats: true, retriever: false },
        failing: ['retriever'],
      });
    });
  });

  it('GET / is an HTML page naming the endpoints; CORS preflight answers *', async () => {
    const res = await app.inject({ url: '/' });
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('/ask');
    expect(res.body).toContain('/sites');
    const pre = await app.inject({
      method: 'OPTIONS',
      url: '/ask',
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST' },
    });
    expect(pre.statusCode).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
  });
});
