import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { ANONYMOUS_CALLER, CANCEL_PREFIX, cancelSubject } from '@askbus/contracts';
import { buildGateway } from './index';
import { parseSse, serveFakeRouter } from './testing';
import type { FakeRouter } from './testing';

// Real HTTP: a client that hangs up must stop the query in every service.
let nats: Awaited<ReturnType<typeof testNats>>;
let routerBus: Bus;
let gatewayBus: Bus;
let router: FakeRouter;
let app: FastifyInstance;
let base: string;
const cancels: string[] = [];

beforeAll(async () => {
  nats = await testNats();
  [routerBus, gatewayBus] = await Promise.all([testBus(nats.url, 'router'), testBus(nats.url, 'gateway')]);
  router = serveFakeRouter(routerBus);
  routerBus.nc.subscribe(`${CANCEL_PREFIX}.>`, { callback: (_err, msg) => void cancels.push(msg.subject) });
  await routerBus.nc.flush();
  app = await buildGateway(gatewayBus, { keepAliveMs: 1_000 });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});

afterAll(async () => {
  await app?.close();
  await Promise.all([routerBus?.drain(), gatewayBus?.drain()]);
  await nats?.stop();
});

it('a client that aborts mid-stream cancels the query in the router', async () => {
  const before = routerBus.stats.cancelled;
  const client = new AbortController();
  const res = await fetch(`${base}/ask?query=slow&query_id=q_abort_sse`, { signal: client.signal });
  expect(res.headers.get('content-type')).toBe('text/event-stream');
  expect(res.headers.get('x-query-id')).toBe('q_abort_sse');
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes('"message_type":"result"')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended early: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  expect(
    parseSse(text.slice(0, text.lastIndexOf('\n\n') + 2)).map(
      (e) => (e.data as { message_type: string }).message_type,
    ),
  ).toEqual(['begin-nlweb-response', 'result']);
  client.abort();

  await expect.poll(() => routerBus.stats.cancelled, { timeout: 3_000 }).toBeGreaterThan(before);
  expect(router.aborted).toContain('q_abort_sse');
  // The query-wide cancel (every service), not only the one call's.
  await expect
    .poll(() => cancels, { timeout: 1_000 })
    .toContain(cancelSubject(ANONYMOUS_CALLER, 'q_abort_sse'));
});

it('a non-streaming client that gives up cancels the query too', async () => {
  const before = routerBus.stats.cancelled;
  const client = new AbortController();
  const pending = fetch(`${base}/ask?query=slow&streaming=false&query_id=q_abort_json`, {
    signal: client.signal,
  });
  await expect
    .poll(() => router.calls.some((c) => c.queryId === 'q_abort_json'), { timeout: 2_000 })
    .toBe(true);
  client.abort();
  await expect(pending).rejects.toThrow();
  await expect.poll(() => routerBus.stats.cancelled, { timeout: 3_000 }).toBeGreaterThan(before);
  expect(router.aborted).toContain('q_abort_json');
  expect(cancels).toContain(cancelSubject(ANONYMOUS_CALLER, 'q_abort_json'));
});

it('the gateway still answers after the aborted calls', async () => {
  const res = await fetch(`${base}/ask?query=again&streaming=false`);
  expect(res.status).toBe(200);
  expect(((await res.json()) as { results: unknown[] }).results).toHaveLength(3);
});

it('close() lets answers run for the grace period, then ends them with a 503 error', async () => {
  const closing = await buildGateway(gatewayBus, { shutdownGraceMs: 100 });
  await closing.listen({ port: 0, host: '127.0.0.1' });
  const addr = closing.server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  const res = await fetch(`${url}/ask?query=slow&query_id=q_shutdown`);
  const body = res.text();
  await expect
    .poll(() => router.calls.some((c) => c.queryId === 'q_shutdown'), { timeout: 2_000 })
    .toBe(true);
  const started = Date.now();
  await closing.close();
  expect(Date.now() - started).toBeGreaterThanOrEqual(90);
  const events = parseSse(await body).map(
    (e) => e.data as { message_type: string; code?: string; error?: unknown },
  );
  expect(events.map((m) => m.message_type)).toEqual([
    'begin-nlweb-response',
    'result',
    'error',
    'end-nlweb-response',
  ]);
  expect(events[2]).toMatchObject({ code: 'unavailable', status: 503 });
  expect(events[3]).toMatchObject({ error: true });
  await expect.poll(() => router.aborted, { timeout: 2_000 }).toContain('q_shutdown');
});
