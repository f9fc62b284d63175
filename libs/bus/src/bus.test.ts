import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { contracts, type StoredItem } from '@askbus/contracts';
import { JOIN_WAIT_MS, type Bus } from './bus';
import { BusError } from './errors';
import { H } from './headers';
import { testBus, testNats, perItemScore } from './testing';
import { parseTraceparent } from './trace';

const item = (n: number): StoredItem => ({
  url: `https://example.test/${n}`,
  name: `Item ${n}`,
  site: 'test',
  '@type': 'Thing',
  schema_object: { '@type': 'Thing', name: `Item ${n}` },
});

/** Reads a stream to its end, for calls whose outcome is all a test looks at. */
async function consume(chunks: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of chunks) void _;
}

let nats: Awaited<ReturnType<typeof testNats>>;
let server: Bus;
let server2: Bus;
let client: Bus;
const seen: { traceparent: string; queryId: string; deadline: number | undefined }[] = [];
const delays = new Map<string, number>();

beforeAll(async () => {
  nats = await testNats();
  server = await testBus(nats.url, 'svc', { heartbeatMs: 100 });
  server2 = await testBus(nats.url, 'svc', { heartbeatMs: 100 });
  client = await testBus(nats.url, 'client', { inactivityMs: 1_000 });
  for (const bus of [server, server2]) {
    bus.serve(contracts.sites, async (_req, ctx) => {
      seen.push({ traceparent: ctx.traceparent, queryId: ctx.queryId, deadline: ctx.deadline });
      return { sites: [{ name: bus === server ? 'one' : 'two', itemCount: 1, types: ['Thing'] }] };
    });
    bus.serveStream(perItemScore, async function* (req, ctx) {
      const delay = delays.get(req.query) ?? 0;
      for (const it of req.items) {
        if (delay) {
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, delay);
            ctx.signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
          });
        }
        if (ctx.signal.aborted) return;
        if (req.query === 'fail') throw new BusError('unavailable', 'model is down');
        if (req.query === 'bad chunk') yield { url: it.url, score: 500, description: 'x' };
        yield { url: it.url, score: 50, description: `scored for ${req.query}` };
      }
    });
  }
  await Promise.all([server.nc.flush(), server2.nc.flush()]);
});

afterAll(async () => {
  await Promise.all([client.drain(), server.drain(), server2.drain()]);
  await nats.stop();
});

describe('unary request', () => {
  it('round-trips a typed request and carries query id, deadline and a child traceparent', async () => {
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const reply = await client.request(
      contracts.sites,
      {},
      { queryId: 'q1', traceparent: parent, timeoutMs: 5_000 },
    );
    expect(reply.sites[0]?.itemCount).toBe(1);
    const last = seen.at(-1)!;
    expect(last.queryId).toBe('q1');
    expect(last.deadline).toBeGreaterThan(Date.now());
    const tp = parseTraceparent(last.traceparent)!;
    expect(tp.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(tp.spanId).not.toBe('b7ad6b7169203331');
  });

  it('spreads requests over the queue group', async () => {
    const names = new Set<string>();
    for (let i = 0; i < 40; i++) names.add((await client.request(contracts.sites, {})).sites[0]!.name);
    expect([...names].sort()).toEqual(['one', 'two']);
  });

  it('refuses an invalid request before sending it', async () => {
    await expect(client.request(contracts.search, { query: '', site: [] } as never)).rejects.toMatchObject({
      code: 'bad_request',
    });
  });

  it('answers a malformed request with a bad_request error reply', async () => {
    const reply = await client.nc.request(contracts.sites.subject, new TextEncoder().encode('{not json'));
    expect(reply.headers?.get(H.error)).toBe('bad_request');
    expect(BusError.fromBody(reply.data).message).toMatch(/not JSON/);
  });

  it('reports no_responders for a subject nobody serves', async () => {
    await expect(client.request(contracts.upsert, { site: 'x', items: [] })).rejects.toMatchObject({
      code: 'no_responders',
    });
  });
});

describe('stream', () => {
  it('delivers every chunk in order, then ends', async () => {
    const out = [];
    for await (const c of client.stream(perItemScore, {
      query: 'q',
      items: [item(1), item(2), item(3)],
    })) {
      out.push(c.url);
    }
    expect(out).toEqual([item(1).url, item(2).url, item(3).url]);
  });

  it('keeps a slow stream alive with heartbeats past the inactivity limit', async () => {
    delays.set('slow', 1_300);
    const out = [];
    for await (const c of client.stream(
      perItemScore,
      { query: 'slow', items: [item(1)] },
      { inactivityMs: 500 },
    )) {
      out.push(c);
    }
    expect(out).toHaveLength(1);
  });

  it('fails with timeout when a stream goes silent', async () => {
    // Raw server that answers once and then says nothing, not even heartbeats.
    const sub = server.nc.subscribe('rank.v1.silent', {
      callback: (_e, msg) => {
        const h = natsHeaders();
        h.set(H.seq, '0');
        msg.respond(new TextEncoder().encode(JSON.stringify({ url: 'u', score: 1, description: 'd' })), {
          headers: h,
        });
      },
    });
    await server.nc.flush();
    const silent = { ...perItemScore, subject: 'rank.v1.silent' };
    const got: unknown[] = [];
    await expect(
      (async () => {
        for await (const c of client.stream(silent, { query: 'q', items: [item(1)] }, { inactivityMs: 300 }))
          got.push(c);
      })(),
    ).rejects.toMatchObject({ code: 'timeout' });
    expect(got).toHaveLength(1);
    sub.unsubscribe();
  });

  it('reports a gap in the sequence', async () => {
    const sub = server.nc.subscribe('rank.v1.gappy', {
      callback: (_e, msg) => {
        const h = natsHeaders();
        h.set(H.seq, '1');
        msg.respond(new TextEncoder().encode('{}'), { headers: h });
      },
    });
    await server.nc.flush();
    const gappy = { ...perItemScore, subject: 'rank.v1.gappy' };
    await expect(consume(client.stream(gappy, { query: 'q', items: [item(1)] }))).rejects.toMatchObject({
      code: 'stream_gap',
    });
    sub.unsubscribe();
  });

  it('carries a handler error with its code to the caller', async () => {
    await expect(
      consume(client.stream(perItemScore, { query: 'fail', items: [item(1)] })),
    ).rejects.toMatchObject({ code: 'unavailable', message: 'model is down' });
  });

  it('turns an invalid chunk into an internal error instead of sending it', async () => {
    await expect(
      consume(client.stream(perItemScore, { query: 'bad chunk', items: [item(1)] })),
    ).rejects.toMatchObject({ code: 'internal' });
  });

  it('with a contract checked on receipt, sends chunks unchecked and the caller refuses an invalid one', async () => {
    const onReceipt = { ...perItemScore, subject: 'rank.v1.onreceipt', checked: 'on-receipt' as const };
    server.serveStream(onReceipt, async function* (req) {
      for (const it of req.items)
        yield { url: it.url, score: it.url.endsWith('/2') ? 500 : 50, description: 'x' };
    });
    await server.nc.flush();
    const good: string[] = [];
    for await (const c of client.stream(onReceipt, { query: 'q', items: [item(1)] })) good.push(c.url);
    expect(good).toEqual([item(1).url]);
    await expect(consume(client.stream(onReceipt, { query: 'q', items: [item(2)] }))).rejects.toMatchObject({
      code: 'internal',
      message: expect.stringMatching(/chunk of rank.v1.onreceipt is invalid/),
    });
  });

  it('cancels every call of a query through the cancel subject', async () => {
    delays.set('cancel me', 5_000);
    const before = server.stats.cancelled + server2.stats.cancelled;
    const run = consume(
      client.stream(perItemScore, { query: 'cancel me', items: [item(1)] }, { queryId: 'qc' }),
    );
    await new Promise((r) => setTimeout(r, 200));
    const other = await testBus(nats.url, 'other');
    other.cancel('qc');
    await expect(run).rejects.toMatchObject({ code: 'cancelled' });
    expect(server.stats.cancelled + server2.stats.cancelled).toBe(before + 1);
    await other.drain();
  });

  it('stops the server when the consumer aborts its own call', async () => {
    delays.set('abort me', 5_000);
    const before = server.stats.cancelled + server2.stats.cancelled;
    const ac = new AbortController();
    const run = consume(
      client.stream(perItemScore, { query: 'abort me', items: [item(1)] }, { signal: ac.signal }),
    );
    setTimeout(() => ac.abort(), 200);
    await expect(run).rejects.toMatchObject({ code: 'cancelled' });
    await waitFor(() => server.stats.cancelled + server2.stats.cancelled === before + 1);
  });

  it('honours the deadline at both ends', async () => {
    delays.set('late', 3_000);
    const t0 = Date.now();
    await expect(
      consume(client.stream(perItemScore, { query: 'late', items: [item(1)] }, { timeoutMs: 300 })),
    ).rejects.toMatchObject({ code: 'deadline_exceeded' });
    expect(Date.now() - t0).toBeLessThan(2_000);
  });
});

describe('reply inbox', () => {
  /** Subscriptions the client's connection holds now (nats.js keeps them in its protocol handler). */
  const subscriptionsOf = (bus: Bus): number =>
    (bus.nc as unknown as { protocol: { subscriptions: { size(): number } } }).protocol.subscriptions.size();

  it('takes the replies of every call on one subscription and forgets each call when it ends', async () => {
    await client.request(contracts.sites, {});
    const before = subscriptionsOf(client);
    const unary = Array.from({ length: 30 }, () => client.request(contracts.sites, {}));
    const streams = Array.from({ length: 5 }, async (_, i) => {
      const urls: string[] = [];
      for await (const c of client.stream(perItemScore, { query: `mux ${i}`, items: [item(1), item(2)] }))
        urls.push(c.url);
      return urls;
    });
    expect(subscriptionsOf(client)).toBe(before);
    expect((await Promise.all(unary)).every((r) => r.sites.length === 1)).toBe(true);
    expect(await Promise.all(streams)).toEqual(Array.from({ length: 5 }, () => [item(1).url, item(2).url]));
    expect(subscriptionsOf(client)).toBe(before);
    expect(client.pendingReplies).toBe(0);
  });

  it("sends a stream's last chunk as its end (one message) and an empty stream as an end marker", async () => {
    const solo = await testBus(nats.url, 'solo');
    // a subject of its own: the other servers of this file do not answer it too
    const soloScore = { ...perItemScore, subject: 'test.solo.score' };
    solo.serveStream(
      soloScore,
      async function* (req) {
        for (const it of req.items)
          if (req.query !== 'none') yield { url: it.url, score: 1, description: 'one' };
      },
      { queue: 'solo' },
    );
    await solo.nc.flush();
    // what the server sends, as a subscriber on every reply subject sees it
    const wire: { seq: string | undefined; end: string | undefined; bytes: number }[] = [];
    const tap = solo.nc.subscribe('_INBOX.>', {
      callback: (_err, m) => {
        if (m.headers?.get(H.seq))
          wire.push({
            seq: m.headers.get(H.seq),
            end: m.headers.get(H.end) || undefined,
            bytes: m.data.length,
          });
      },
    });
    await solo.nc.flush();
    const transport = (solo.nc as unknown as { protocol: { transport: { send(b: Uint8Array): void } } })
      .protocol.transport;
    let writes = 0;
    const send = transport.send.bind(transport);
    transport.send = (b: Uint8Array) => {
      writes++;
      send(b);
    };
    const urls = async (query: string, n: number): Promise<string[]> => {
      const out: string[] = [];
      const items = Array.from({ length: n }, (_, i) => item(i + 1));
      for await (const c of client.stream(soloScore, { query, items })) out.push(c.url);
      return out;
    };
    try {
      expect(await urls('one', 1)).toEqual([item(1).url]);
      expect(writes).toBe(1);
      await expect.poll(() => wire.length).toBe(1);
      expect(wire).toEqual([{ seq: '0', end: 'last', bytes: expect.any(Number) }]);
      expect(wire[0]!.bytes).toBeGreaterThan(0);

      wire.length = 0;
      expect(await urls('three', 3)).toEqual([item(1).url, item(2).url, item(3).url]);
      await expect.poll(() => wire.length).toBe(3);
      expect(wire.map((w) => [w.seq, w.end])).toEqual([
        ['0', undefined],
        ['1', undefined],
        ['2', 'last'],
      ]);

      wire.length = 0;
      expect(await urls('none', 2)).toEqual([]);
      await expect.poll(() => wire.length).toBe(1);
      expect(wire).toEqual([{ seq: '0', end: 'done', bytes: 0 }]);
    } finally {
      transport.send = send;
      tap.unsubscribe();
      await solo.drain();
    }
  });

  it('takes a stream that ends with an empty end marker after its last chunk (a server before `last`)', async () => {
    const old = await testBus(nats.url, 'old');
    const oldScore = { ...perItemScore, subject: 'test.old.score' };
    // a server of the earlier protocol, by hand: every chunk alone, then `done`
    old.nc.subscribe(oldScore.subject, {
      queue: 'old',
      callback: (_err, m) => {
        const chunk = (seq: number, data: Uint8Array, end?: string) => {
          const h = natsHeaders();
          h.set(H.seq, String(seq));
          if (end) h.set(H.end, end);
          old.nc.publish(m.reply!, data, { headers: h });
        };
        const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
        chunk(0, enc({ url: 'https://example.test/a', score: 2, description: 'a' }));
        chunk(1, enc({ url: 'https://example.test/b', score: 1, description: 'b' }));
        chunk(2, new Uint8Array(), 'done');
      },
    });
    await old.nc.flush();
    const lone = await testBus(nats.url, 'lone');
    try {
      const got: string[] = [];
      for await (const c of lone.stream(oldScore, { query: 'old', items: [item(1)] })) got.push(c.url);
      expect(got).toEqual(['https://example.test/a', 'https://example.test/b']);
    } finally {
      await lone.drain();
      await old.drain();
    }
  });

  it('sends a chunk its contract lets join the next one with that chunk, in one message', async () => {
    const joiner = await testBus(nats.url, 'joiner');
    const joinScore = {
      ...perItemScore,
      subject: 'test.join.score',
      joinsNext: (c: { description: string }) => c.description === 'head',
    };
    const head = { url: 'https://example.test/head', score: 0, description: 'head' };
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    joiner.serveStream(
      joinScore,
      async function* (req) {
        yield head;
        if (req.query === 'only') return;
        await pause(req.query === 'slow' ? JOIN_WAIT_MS + 40 : 5);
        if (req.query === 'fail') throw new BusError('unavailable', 'model is down');
        for (const it of req.items) yield { url: it.url, score: 1, description: 'one' };
      },
      { queue: 'joiner' },
    );
    await joiner.nc.flush();
    const wire: { seq: string | undefined; end: string | undefined; chunks: string | undefined }[] = [];
    const tap = joiner.nc.subscribe('_INBOX.>', {
      callback: (_err, m) => {
        const seq = m.headers?.get(H.seq);
        if (seq)
          wire.push({
            seq,
            end: m.headers?.get(H.end) || undefined,
            chunks: m.headers?.get(H.chunks) || undefined,
          });
      },
    });
    await joiner.nc.flush();
    const urls = async (query: string, n: number): Promise<string[]> => {
      const out: string[] = [];
      const items = Array.from({ length: n }, (_, i) => item(i + 1));
      for await (const c of client.stream(joinScore, { query, items })) out.push(c.url);
      return out;
    };
    try {
      // the head waits for the first item and goes with it
      expect(await urls('quick', 2)).toEqual([head.url, item(1).url, item(2).url]);
      await expect.poll(() => wire.length).toBe(2);
      expect(wire).toEqual([
        { seq: '0', end: undefined, chunks: '2' },
        { seq: '1', end: 'last', chunks: undefined },
      ]);
      // the next chunk comes too late: the head goes alone once JOIN_WAIT_MS have passed
      wire.length = 0;
      expect(await urls('slow', 1)).toEqual([head.url, item(1).url]);
      await expect.poll(() => wire.length).toBe(2);
      expect(wire.map((w) => [w.seq, w.end, w.chunks])).toEqual([
        ['0', undefined, undefined],
        ['1', 'last', undefined],
      ]);
      // a stream that ends after the head: the head is its last chunk
      wire.length = 0;
      expect(await urls('only', 1)).toEqual([head.url]);
      await expect.poll(() => wire.length).toBe(1);
      expect(wire[0]).toEqual({ seq: '0', end: 'last', chunks: undefined });
      // the handler fails while the head waits: the head still arrives, then the error
      const got: string[] = [];
      const failed = (async () => {
        for await (const c of client.stream(joinScore, { query: 'fail', items: [item(1)] })) got.push(c.url);
      })();
      await expect(failed).rejects.toMatchObject({ code: 'unavailable' });
      expect(got).toEqual([head.url]);
    } finally {
      tap.unsubscribe();
      await joiner.drain();
    }
  });

  it('refuses a message whose chunk count is not what it carries', async () => {
    const liar = await testBus(nats.url, 'liar');
    const liarScore = { ...perItemScore, subject: 'test.liar.score' };
    liar.nc.subscribe(liarScore.subject, {
      queue: 'liar',
      callback: (_err, m) => {
        const h = natsHeaders();
        h.set(H.seq, '0');
        h.set(H.chunks, '3');
        h.set(H.end, 'last');
        const chunk = { url: 'https://example.test/a', score: 2, description: 'a' };
        liar.nc.publish(m.reply!, new TextEncoder().encode(JSON.stringify([chunk, chunk])), { headers: h });
      },
    });
    await liar.nc.flush();
    try {
      const consume = (async () => {
        for await (const _ of client.stream(liarScore, { query: 'x', items: [item(1)] })) void _;
      })();
      await expect(consume).rejects.toMatchObject({
        code: 'internal',
        message: expect.stringMatching(/3 chunks/),
      });
    } finally {
      await liar.drain();
    }
  });

  it('drops a reply that comes after its call gave up', async () => {
    delays.set('late', 300);
    await expect(
      consume(client.stream(perItemScore, { query: 'late', items: [item(1)] }, { timeoutMs: 100 })),
    ).rejects.toMatchObject({ code: 'deadline_exceeded' });
    expect(client.pendingReplies).toBe(0);
    await new Promise((r) => setTimeout(r, 400));
    expect(client.pendingReplies).toBe(0);
    // the next call on the same subscription is not confused by the late reply
    const urls: string[] = [];
    for await (const c of client.stream(perItemScore, { query: 'next', items: [item(3)] })) urls.push(c.url);
    expect(urls).toEqual([item(3).url]);
  });
});

describe('drain', () => {
  it('finishes work in flight before closing', async () => {
    const bus = await testBus(nats.url, 'drainer');
    bus.serve({ ...contracts.sites, subject: 'retrieve.v1.sites.drain' }, async () => {
      await new Promise((r) => setTimeout(r, 300));
      return { sites: [] };
    });
    await bus.nc.flush();
    const pending = client.request({ ...contracts.sites, subject: 'retrieve.v1.sites.drain' }, {});
    await new Promise((r) => setTimeout(r, 50));
    await bus.drain();
    await expect(pending).resolves.toEqual({ sites: [] });
    expect(bus.nc.isClosed()).toBe(true);
  });
});

async function waitFor(cond: () => boolean, ms = 3_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('service discovery ($SRV, ADR-32)', () => {
  it('answers PING, INFO and STATS for every replica with its endpoints and counts', async () => {
    const decode = (m: { data: Uint8Array }) =>
      JSON.parse(new TextDecoder().decode(m.data)) as Record<string, unknown>;
    const replies = async (subject: string) => {
      const out: Record<string, unknown>[] = [];
      for await (const m of await client.nc.requestMany(subject, undefined, { maxWait: 300 }))
        out.push(decode(m));
      return out;
    };
    const pings = await replies('$SRV.PING.svc');
    expect(pings.map((p) => p.id).sort()).toEqual([server.discovery.id, server2.discovery.id].sort());
    expect(pings[0]).toMatchObject({ type: 'io.nats.micro.v1.ping_response', name: 'svc' });

    const [info] = await replies(`$SRV.INFO.svc.${server.discovery.id}`);
    expect(info).toMatchObject({
      type: 'io.nats.micro.v1.info_response',
      name: 'svc',
      id: server.discovery.id,
    });
    expect(info!.endpoints).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ subject: 'retrieve.v1.sites', queue_group: 'svc' }),
        expect.objectContaining({ subject: 'rank.v1.score', queue_group: 'svc' }),
      ]),
    );

    const stats = await replies('$SRV.STATS.svc');
    const sites = stats
      .flatMap((s) => s.endpoints as { subject: string; num_requests: number; num_errors: number }[])
      .filter((e) => e.subject === 'retrieve.v1.sites');
    // Every sites request handled so far in this file, across both replicas: the ones the
    // handler saw, and the malformed one that got a bad_request.
    expect(sites.reduce((n, e) => n + e.num_requests, 0)).toBe(seen.length + 1);
    expect(sites.reduce((n, e) => n + e.num_errors, 0)).toBe(1);
    const all = await replies('$SRV.PING');
    expect(all.map((p) => p.name)).toEqual(expect.arrayContaining(['svc', 'client']));
  });
});
