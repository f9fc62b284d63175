/**
 * NATS dying under the gateway: /ready says `nats: false` (and 503) while it is gone, and a
 * query whose answer was streaming gets its error at once, not after the bus's 15 s inactivity
 * limit. Then NATS comes back on the same port and both recover.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Bus } from '@askbus/bus';
import { startNatsServer, type NatsServerHandle } from '@askbus/bus';
import { testBus } from '@askbus/bus/testing';
import { buildGateway } from './index';
import { parseSse, serveFakeRetriever, serveFakeRouter } from './testing';

let nats: NatsServerHandle;
let port: number;
let buses: Bus[] = [];
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  nats = await startNatsServer();
  port = Number(new URL(nats.url).port);
  buses = await Promise.all([
    testBus(nats.url, 'router'),
    testBus(nats.url, 'retriever'),
    testBus(nats.url, 'gateway'),
  ]);
  const [routerBus, retrieverBus, gatewayBus] = buses as [Bus, Bus, Bus];
  serveFakeRouter(routerBus);
  serveFakeRetriever(retrieverBus);
  await routerBus.nc.flush();
  await retrieverBus.nc.flush();
  app = await buildGateway(gatewayBus, { keepAliveMs: 60_000, askTimeoutMs: 60_000 });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
}, 30_000);

afterAll(async () => {
  await app?.close();
  await Promise.all(buses.map((b) => b.drain(500).catch(() => undefined)));
  await nats?.stop();
});

const ready = async (): Promise<{ status: number; body: { checks?: { nats?: boolean } } }> => {
  const r = await fetch(`${base}/ready`);
  return { status: r.status, body: (await r.json()) as { checks?: { nats?: boolean } } };
};

describe('NATS goes away mid-answer', () => {
  it('the streaming query ends with an error at once; /ready says nats: false; both recover', async () => {
    expect(await ready()).toMatchObject({ status: 200, body: { checks: { nats: true } } });

    // `slow`: one result, then nothing until cancelled (the fake router).
    const res = await fetch(`${base}/ask?query=slow&streaming=true`);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('"result"')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended early: ${text}`);
      text += new TextDecoder().decode(value);
    }
    const killedAt = performance.now();
    await nats.stop();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const tookMs = performance.now() - killedAt;
    const events = parseSse(text).map((e) => e.data as { message_type?: string; error?: string });
    const error = events.find((e) => e.message_type === 'error');
    console.log(
      `with NATS killed mid-answer the stream ended after ${tookMs.toFixed(0)} ms: ${JSON.stringify(error)}`,
    );
    expect(error).toMatchObject({ message_type: 'error' });
    expect(events[events.length - 1]).toMatchObject({ message_type: 'end-nlweb-response' });
    // The bus's inactivity limit is 15 s; well under it (a loose bound for a busy machine).
    expect(tookMs).toBeLessThan(5_000);

    const down = await ready();
    expect(down.status).toBe(503);
    expect(down.body.checks?.nats).toBe(false);

    nats = await startNatsServer({ port });
    let back = await ready();
    for (let i = 0; i < 100 && back.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      back = await ready();
    }
    expect(back).toMatchObject({ status: 200, body: { checks: { nats: true } } });
  }, 40_000);
});
