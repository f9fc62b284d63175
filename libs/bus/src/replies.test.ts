/**
 * The bus's own layer, without NATS permissions (a server with no users): which reply subjects
 * a bus answers on, and who may cancel the calls it serves. permissions.test.ts and
 * cli/src/reply-abuse.test.ts add the NATS layer.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { headers as natsHeaders, type Msg, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { contracts, type StoredItem } from '@askbus/contracts';
import { Bus } from './bus';
import { BusError } from './errors';
import { H } from './headers';
import { RefusalLog } from './refusal-log';
import { checkReply, checkUserName } from './reply-inbox';
import { RunningWork, parseCancelSubject } from './running-work';
import { testNats, perItemScore } from './testing';

const item = (n: number): StoredItem => ({
  url: `https://example.test/${n}`,
  name: `Item ${n}`,
  site: 'test',
  '@type': 'Thing',
  schema_object: { '@type': 'Thing', name: `Item ${n}` },
});
const encode = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
/** How long to wait for something that must happen (a loaded machine is slow; no timing is asserted). */
const PATIENCE = { timeout: 15_000, interval: 20 };

describe('checkReply', () => {
  it('takes user inboxes always, plain _INBOX only without users, and nothing else', () => {
    expect(checkReply('_INBOX_router.abc', true)).toEqual({
      ok: true,
      reply: '_INBOX_router.abc',
      caller: 'router',
    });
    expect(checkReply('_INBOX_tool-who.a.b', true)).toMatchObject({ ok: true, caller: 'tool-who' });
    expect(checkReply('_INBOX.abc', false)).toMatchObject({ ok: true, caller: '_' });
    expect(checkReply('_INBOX.abc', true)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/plain _INBOX/),
    });
    for (const reply of [
      '$JS.API.STREAM.PURGE.KV_askbus_a2a_tasks',
      '$KV.askbus_a2a_tasks.k1',
      'ask.v1.run',
      'a2a.v1.events.t1',
      '_INBOX',
      '_INBOX_',
      '_INBOX_router',
      '_INBOX_.x',
      '_INBOX__.x',
      '_INBOX_router.*',
      '_INBOX_router.>',
      '_INBOX_router..x',
      '_INBOX_router.x.',
      '_INBOX_a.b.c d',
      '_INBOX.>',
      'x._INBOX_router.y',
    ]) {
      for (const users of [true, false]) {
        expect(checkReply(reply, users), `${reply} (users: ${users})`).toMatchObject({ ok: false });
      }
    }
    expect(checkReply(undefined, false)).toMatchObject({ ok: false, reason: 'it has no reply subject' });
    expect(checkReply('', false)).toMatchObject({ ok: false });
  });

  it('accepts NATS user names that make one subject token', () => {
    expect(checkUserName('tool-details')).toBe('tool-details');
    for (const bad of ['_', 'a.b', 'a*', '', 'a b', 'x'.repeat(101)])
      expect(() => checkUserName(bad)).toThrow();
  });
});

describe('cancel subjects and owners', () => {
  it('parses ask.v1.cancel.<caller>.<queryId>[.<callId>] and nothing else', () => {
    expect(parseCancelSubject('ask.v1.cancel.gateway.q1')).toEqual({
      by: 'gateway',
      queryId: 'q1',
      callId: undefined,
    });
    expect(parseCancelSubject('ask.v1.cancel.router.q1.c1')).toEqual({
      by: 'router',
      queryId: 'q1',
      callId: 'c1',
    });
    for (const s of [
      'ask.v1.cancel.q1',
      'ask.v1.cancel.a.b.c.d',
      'ask.v1.cancel',
      'ask.v1.run.a.b',
      'ask.v1.cancel..q',
    ])
      expect(parseCancelSubject(s), s).toBeUndefined();
  });

  it('lets the caller and the origin stop a call, nobody else; without users anybody', () => {
    const work = new RunningWork(true);
    const a = new AbortController();
    const b = new AbortController();
    work.add('q', 'c1', { caller: 'router', origin: 'gateway' }, a);
    // Another request claiming the same ids does not hide the first one.
    work.add('q', 'c1', { caller: 'tool-details', origin: undefined }, b);
    expect(work.cancel({ by: 'tool-who', queryId: 'q', callId: undefined })).toEqual({
      aborted: 0,
      refused: 2,
    });
    expect(work.cancel({ by: 'gateway', queryId: 'q', callId: 'c1' })).toEqual({ aborted: 1, refused: 1 });
    expect([a.signal.aborted, b.signal.aborted]).toEqual([true, false]);
    expect(work.cancel({ by: 'tool-details', queryId: 'q', callId: undefined })).toEqual({
      aborted: 1,
      refused: 1,
    });
    expect(b.signal.aborted).toBe(true);

    const open = new RunningWork(false);
    const c = new AbortController();
    const forget = open.add('q', 'c', { caller: '_', origin: undefined }, c);
    forget();
    expect(open.cancel({ by: 'anyone', queryId: 'q', callId: undefined }).aborted).toBe(0);
    open.add('q', 'c', { caller: '_', origin: undefined }, c);
    expect(open.cancel({ by: 'anyone', queryId: 'q', callId: undefined }).aborted).toBe(1);
  });
});

describe('a bus answers only on inboxes', () => {
  let nats: Awaited<ReturnType<typeof testNats>>;
  let raw: NatsConnection;
  const spied: Msg[] = [];
  const logs: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
  let ran = 0;
  const buses: Bus[] = [];
  /** A bus serving sites (unary) and score (stream); `user` makes it a bus with NATS users. */
  const serving = async (user?: string) => {
    const nc = await connect({ servers: nats.url });
    const bus = new Bus(nc, {
      service: user ?? 'open',
      heartbeatMs: 100,
      log: (_level, msg, fields) => logs.push({ msg, fields }),
      ...(user ? { user, inboxPrefix: `_INBOX_${user}` } : {}),
    });
    bus.serve(contracts.sites, async () => {
      ran++;
      return { sites: [] };
    });
    bus.serveStream(perItemScore, async function* (req) {
      ran++;
      await new Promise((r) => setTimeout(r, 250)); // a heartbeat falls due meanwhile
      yield { url: req.items[0]!.url, score: 1, description: 'd' };
    });
    await nc.flush();
    buses.push(bus);
    return bus;
  };

  beforeAll(async () => {
    nats = await testNats();
    raw = await connect({ servers: nats.url });
    raw.subscribe('>', { callback: (_e, m) => void spied.push(m) });
    await raw.flush();
  });
  // One serving bus per test: two would both hear each request (different queue groups).
  afterEach(async () => {
    for (const b of buses.splice(0)) await b.drain(1_000);
  });
  afterAll(async () => {
    await raw?.close();
    await nats?.stop();
  });

  /** Sends one request as a raw client and returns every message published because of it. */
  const send = async (bus: Bus, subject: string, body: unknown, reply: string | undefined) => {
    const before = { refused: bus.stats.refusedReplies, done: bus.stats.served + bus.stats.failed };
    const from = spied.length;
    raw.publish(subject, encode(body), reply ? { reply } : {});
    await vi.waitFor(
      () =>
        expect(
          bus.stats.refusedReplies > before.refused || bus.stats.served + bus.stats.failed > before.done,
        ).toBe(true),
      PATIENCE,
    );
    await bus.nc.flush();
    await raw.flush();
    return spied.slice(from).filter((m) => m.subject !== subject);
  };

  it('refuses (and never runs) a request whose reply is not an inbox, logging it without the payload', async () => {
    const bus = await serving();
    const attacks = [
      '$JS.API.STREAM.PURGE.KV_askbus_a2a_tasks',
      '$KV.askbus_a2a_tasks.forged',
      'ask.v1.run',
      'a2a.v1.events.t1',
      '_INBOX_gateway.>',
    ];
    const search = { query: 'secret-payload', items: [item(1)] };
    for (const reply of attacks) {
      for (const [subject, body] of [
        [contracts.sites.subject, {}],
        [perItemScore.subject, search],
      ] as const) {
        expect(await send(bus, subject, body, reply), `${subject} → ${reply}`).toEqual([]);
      }
    }
    expect(await send(bus, contracts.sites.subject, {}, undefined)).toEqual([]);
    expect(ran).toBe(0);
    expect(bus.stats.refusedReplies).toBe(attacks.length * 2 + 1);
    // Logged with subject and reply, never the payload; a burst is one line a second.
    expect(logs[0]).toEqual({
      msg: 'refused a request to retrieve.v1.sites: its reply subject is not an inbox',
      fields: { subject: 'retrieve.v1.sites', reply: '$JS.API.STREAM.PURGE.KV_askbus_a2a_tasks' },
    });
    expect(JSON.stringify(logs)).not.toContain('secret-payload');
  });

  it('logs a burst of refusals as one line a second, saying how many it left out', () => {
    let now = 0;
    const lines: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
    const log = new RefusalLog(
      (_l, msg, fields) => void lines.push({ msg, fields }),
      1_000,
      () => now,
    );
    for (let i = 0; i < 5; i++) log.note('reply', `refused ${i}`, { i });
    log.note('cancel', 'another kind', {});
    now = 1_000;
    log.note('reply', 'refused 5', { i: 5 });
    expect(lines).toEqual([
      { msg: 'refused 0', fields: { i: 0 } },
      { msg: 'another kind', fields: {} },
      { msg: 'refused 5', fields: { i: 5, suppressed: 4 } },
    ]);
  });

  it('answers an inbox, unary and stream, heartbeats included, and nothing else', async () => {
    const bus = await serving();
    const unary = await send(bus, contracts.sites.subject, {}, '_INBOX.unary1');
    expect(unary.map((m) => m.subject)).toEqual(['_INBOX.unary1']);
    const stream = await send(
      bus,
      perItemScore.subject,
      { query: 'q', items: [item(1)] },
      '_INBOX_router.s1',
    );
    // a heartbeat or more, then the chunk, which carries the stream's end (`last`)
    expect(stream.length).toBeGreaterThanOrEqual(2);
    expect(stream.at(-1)?.headers?.get(H.end)).toBe('last');
    expect(new Set(stream.map((m) => m.subject))).toEqual(new Set(['_INBOX_router.s1']));
    expect(stream.some((m) => m.headers?.get(H.heartbeat))).toBe(true);
  });

  it('with a NATS user, refuses a plain _INBOX and answers a user inbox', async () => {
    const bus = await serving('retriever');
    const ranBefore = ran;
    expect(await send(bus, contracts.sites.subject, {}, '_INBOX.plain')).toEqual([]);
    expect(ran).toBe(ranBefore);
    expect((await send(bus, contracts.sites.subject, {}, '_INBOX_gateway.u1')).map((m) => m.subject)).toEqual(
      ['_INBOX_gateway.u1'],
    );
  });

  it('answers $SRV discovery only on an inbox', async () => {
    const bus = await serving('ranker');
    const ask = async (reply: string) => {
      const from = spied.length;
      const refused = bus.stats.refusedReplies;
      raw.publish(`$SRV.PING.ranker.${bus.discovery.id}`, undefined, { reply });
      // The bus has the request once its own ping comes back, and its answer (if any) is at the
      // server after a second one.
      await raw.flush();
      await bus.nc.flush();
      await bus.nc.flush();
      await raw.flush();
      return {
        out: spied.slice(from).filter((m) => !m.subject.startsWith('$SRV.')),
        refused: bus.stats.refusedReplies - refused,
      };
    };
    expect(await ask('$JS.API.STREAM.PURGE.KV_askbus_a2a_tasks')).toEqual({ out: [], refused: 1 });
    expect(await ask('_INBOX.plain')).toEqual({ out: [], refused: 1 });
    const ok = await ask('_INBOX_gateway.ping1');
    expect(ok.refused).toBe(0);
    expect(ok.out.map((m) => m.subject)).toEqual(['_INBOX_gateway.ping1']);
  });

  it('answers bad_request to ids that cannot be subject tokens', async () => {
    const bus = await serving();
    const h = natsHeaders();
    h.set(H.queryId, 'q.*');
    const reply = await raw.request(contracts.sites.subject, encode({}), { headers: h, timeout: 5_000 });
    expect(reply.headers?.get(H.error)).toBe('bad_request');
    expect(BusError.fromBody(reply.data).message).toMatch(/Askbus-Query-Id/);
    void bus;
  });
});

describe('cancels on buses with NATS users', () => {
  let nats: Awaited<ReturnType<typeof testNats>>;
  const buses: Bus[] = [];
  const as = async (user: string, heartbeatMs = 2_000) => {
    const nc = await connect({ servers: nats.url, inboxPrefix: `_INBOX_${user}` });
    const bus = new Bus(nc, {
      service: user,
      user,
      inboxPrefix: `_INBOX_${user}`,
      heartbeatMs,
      log: () => undefined,
    });
    buses.push(bus);
    return bus;
  };
  let ranker: Bus;
  let started = 0;

  beforeAll(async () => {
    nats = await testNats();
    ranker = await as('ranker', 100);
    // Scores nothing until cancelled (or 20 s pass).
    ranker.serveStream(perItemScore, async function* (_req, ctx) {
      started++;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 20_000);
        ctx.signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
      });
      if (!ctx.signal.aborted) yield { url: 'u', score: 1, description: 'd' };
    });
    await ranker.nc.flush();
  });
  afterAll(async () => {
    for (const b of buses) await b.drain(500);
    await nats?.stop();
  });

  const running = async (caller: Bus, queryId: string, origin?: string) => {
    const before = started;
    const result = (async () => {
      for await (const _ of caller.stream(
        perItemScore,
        { query: 'q', items: [item(1)] },
        { queryId, timeoutMs: 30_000, ...(origin ? { origin } : {}) },
      ))
        void _;
    })().then(
      () => 'done',
      (e: unknown) => (e instanceof BusError ? e.code : String(e)),
    );
    await vi.waitFor(() => expect(started).toBe(before + 1), PATIENCE);
    return { result };
  };

  it("refuses another user's cancel of a query or a call; the caller's own still works", async () => {
    const router = await as('router');
    const intruder = await as('tool-details');
    const { result } = await running(router, 'q-owned');
    const before = ranker.stats.refusedCancels;
    intruder.cancel('q-owned');
    await vi.waitFor(() => expect(ranker.stats.refusedCancels).toBe(before + 1), PATIENCE);
    expect(ranker.stats.inFlight).toBe(1);
    router.cancel('q-owned');
    expect(await result).toBe('cancelled');
    await vi.waitFor(() => expect(ranker.stats.inFlight).toBe(0), PATIENCE);
    expect(ranker.stats.cancelled).toBeGreaterThanOrEqual(1);
  });

  it("lets the query's origin stop a call another service made for it, in one hop", async () => {
    const router = await as('router');
    const gateway = await as('gateway');
    const { result } = await running(router, 'q-origin', 'gateway');
    gateway.cancel('q-origin');
    expect(await result).toBe('cancelled');
    // A handler's onward calls name the same origin.
    let onward: string | undefined;
    const tool = await as('tool-ensemble');
    tool.serve(contracts.sites, async (_req, ctx) => {
      onward = ctx.onward().origin;
      return { sites: [] };
    });
    await tool.nc.flush();
    await router.request(contracts.sites, {}, { timeoutMs: 5_000 });
    expect(onward).toBe('router');
    await router.request(contracts.sites, {}, { timeoutMs: 5_000, origin: 'gateway' });
    expect(onward).toBe('gateway');
  });
});
