import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { buildGateway } from './index';
import { serveFakeRouter } from './testing';

let nats: Awaited<ReturnType<typeof testNats>>;
let routerBus: Bus;
let gatewayBus: Bus;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  nats = await testNats();
  [routerBus, gatewayBus] = await Promise.all([testBus(nats.url, 'router'), testBus(nats.url, 'gateway')]);
  serveFakeRouter(routerBus);
  await routerBus.nc.flush();
  app = await buildGateway(gatewayBus, { keepAliveMs: 10_000, askTimeoutMs: 60_000 });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app?.close();
  await Promise.all([routerBus?.drain(), gatewayBus?.drain()]);
  await nats?.stop();
});

type Write = (this: net.Socket, ...args: unknown[]) => unknown;

/** What the gateway's sockets hand the kernel, one entry per write, while `fn` runs. */
async function serverWrites(fn: () => Promise<void>): Promise<string[]> {
  const port = Number(new URL(base).port);
  const proto = net.Socket.prototype as unknown as { _write: Write; _writev: Write };
  const { _write: write, _writev: writev } = proto;
  const writes: string[] = [];
  const text = (chunk: unknown): string =>
    typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('latin1');
  proto._write = function (this: net.Socket, ...args) {
    if (this.localPort === port) writes.push(text(args[0]));
    return write.apply(this, args);
  };
  proto._writev = function (this: net.Socket, ...args) {
    if (this.localPort === port)
      writes.push((args[0] as { chunk: unknown }[]).map((c) => text(c.chunk)).join(''));
    return writev.apply(this, args);
  };
  try {
    await fn();
  } finally {
    proto._write = write;
    proto._writev = writev;
  }
  return writes;
}

describe('SSE answer writes', () => {
  it('sends the headers and the first message in one socket write', async () => {
    const writes = await serverWrites(async () => {
      const res = await fetch(`${base}/ask?query=westerns&site=movies`);
      expect(await res.text()).toContain('end-nlweb-response');
    });
    expect(writes[0]).toMatch(/^HTTP\/1\.1 200/);
    expect(writes[0]).toContain('begin-nlweb-response');
  });

  it('sends the headers alone when no message comes soon', async () => {
    const stop = new AbortController();
    const started = performance.now();
    // the fake router answers "hang" with nothing for 30 s
    const res = await fetch(`${base}/ask?query=hang&site=movies`, { signal: stop.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(performance.now() - started).toBeLessThan(5_000);
    stop.abort();
  });
});
