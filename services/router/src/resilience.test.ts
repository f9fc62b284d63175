import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts, type Message, type RetrievedItem } from '@askbus/contracts';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { startRanker, type RankerHandle } from '@askbus/ranker';
import { startRouter } from './index';

/** 20 westerns by Clint Eastwood: every one scores above 0 for the query. */
const candidates: RetrievedItem[] = Array.from({ length: 20 }, (_, i) => ({
  url: `https://movies.example/w${i}`,
  name: `Western ${i}`,
  site: 'movies',
  '@type': 'Movie',
  schema_object: {
    '@type': 'Movie',
    name: `Western ${i}`,
    genre: ['Western'],
    director: { '@type': 'Person', name: 'Clint Eastwood' },
  },
  retrievalScore: 100 - i,
}));

async function waitFor(check: () => boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('router over two real ranker replicas on a real NATS', () => {
  let nats: Awaited<ReturnType<typeof testNats>>;
  let retriever: Bus;
  let router: Bus;
  let caller: Bus;
  const rankerBuses: Bus[] = [];

  beforeAll(async () => {
    nats = await testNats();
    retriever = await testBus(nats.url, 'retriever');
    retriever.serve(contracts.search, async () => ({ items: candidates }));
    // A dead replica is noticed when its stream stays silent past the router's inactivity limit.
    router = await testBus(nats.url, 'router', { inactivityMs: 400 });
    startRouter(router, { search: { rankBatchSize: 2, collateMs: 5 } });
    caller = await testBus(nats.url, 'gateway');
    await Promise.all([retriever.nc.flush(), router.nc.flush()]);
  });

  afterAll(async () => {
    for (const b of [caller, router, retriever, ...rankerBuses]) if (!b.nc.isClosed()) await b.drain(500);
    await nats?.stop();
  });

  async function replicas(delayMs: number): Promise<{ buses: Bus[]; handles: RankerHandle[] }> {
    const buses: Bus[] = [];
    const handles: RankerHandle[] = [];
    for (let i = 0; i < 2; i++) {
      const bus = await testBus(nats.url, 'ranker', { heartbeatMs: 100 });
      handles.push(startRanker(bus, { delayMs }));
      await bus.nc.flush();
      buses.push(bus);
      rankerBuses.push(bus);
    }
    return { buses, handles };
  }

  async function ask(queryId: string): Promise<Message[]> {
    const out: Message[] = [];
    for await (const m of caller.stream(
      contracts.ask,
      { queryId, query: 'westerns with clint eastwood', site: ['movies'], maxResults: 50, minScore: 0 },
      { timeoutMs: 10_000 },
    )) {
      out.push(m);
    }
    return out;
  }
  const resultUrls = (msgs: Message[]): string[] =>
    msgs.flatMap((m) =>
      m.message_type === 'result' && Array.isArray(m.content) ? m.content.map((c) => c.url) : [],
    );

  it('spreads the batches over both replicas and gets every item back', async () => {
    const { buses, handles } = await replicas(20);
    const msgs = await ask('spread-1');
    expect(new Set(resultUrls(msgs)).size).toBe(20);
    expect(msgs.at(-1)).toMatchObject({ message_type: 'end-nlweb-response' });
    expect(msgs.some((m) => m.message_type === 'status')).toBe(false);
    const counts = handles.map((h) => h.stats.requests);
    expect(counts[0]! + counts[1]!).toBe(10);
    expect(counts[0]).toBeGreaterThan(0);
    expect(counts[1]).toBeGreaterThan(0);
    for (const b of buses) await b.drain(500);
  });

  it('completes with every item when a replica dies (connection closed) mid-query', async () => {
    const { buses, handles } = await replicas(300);
    const [victim, survivor] = buses as [Bus, Bus];
    const started = Date.now();
    const pending = ask('kill-close-1');
    // Kill the victim while it holds batches; on a loaded machine the two replicas' batches need
    // not overlap in time, so only the victim's work in flight matters here.
    await waitFor(() => victim.stats.inFlight > 0, 10_000);
    const lost = victim.stats.inFlight;
    await victim.nc.close(); // the process died: no end marker, no heartbeat
    const msgs = await pending;
    expect(new Set(resultUrls(msgs)).size).toBe(20);
    expect(msgs.some((m) => m.message_type === 'error' || m.message_type === 'status')).toBe(false);
    expect(lost).toBeGreaterThan(0);
    // the survivor served its own batches and then the lost ones again
    expect(handles[1]!.stats.requests).toBeGreaterThan(10 - handles[0]!.stats.requests);
    // finished by re-sending, not by running into the 10 s deadline of the ask
    expect(Date.now() - started).toBeLessThan(9_000);
    await survivor.drain(500);
  });

  it('completes with every item when a replica is drained mid-query (its calls are cancelled)', async () => {
    const { buses } = await replicas(300);
    const [victim, survivor] = buses as [Bus, Bus];
    const pending = ask('kill-drain-1');
    await waitFor(() => victim.stats.inFlight > 0);
    await victim.drain(20);
    const msgs = await pending;
    expect(new Set(resultUrls(msgs)).size).toBe(20);
    expect(msgs.some((m) => m.message_type === 'error' || m.message_type === 'status')).toBe(false);
    expect(victim.stats.cancelled).toBeGreaterThan(0);
    await survivor.drain(500);
  });
});
