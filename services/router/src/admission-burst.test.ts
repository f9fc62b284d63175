/**
 * A burst against a retriever that works one search at a time: the router's admission makes the
 * searches wait before they are sent, so each gets its whole time limit and every question is
 * answered; sent all at once (admission effectively off), the later ones run out of time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts, type Message, type RetrievedItem } from '@askbus/contracts';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { startRanker } from '@askbus/ranker';
import { startRouter } from './index';

const SEARCH_MS = 15;
const BURST = 150;
/** 150 searches one after the other take 2.25 s: well past this limit for the last of them. */
const RETRIEVE_TIMEOUT_MS = 800;

const items: RetrievedItem[] = Array.from({ length: 4 }, (_, i) => ({
  url: `https://movies.example/w${i}`,
  name: `Western ${i}`,
  site: 'movies',
  '@type': 'Movie',
  schema_object: { '@type': 'Movie', name: `Western ${i}`, genre: ['Western'] },
  retrievalScore: 10 - i,
}));

let nats: Awaited<ReturnType<typeof testNats>>;
const buses: Bus[] = [];
let caller: Bus;
let searched = 0;

beforeAll(async () => {
  nats = await testNats();
  const retriever = await testBus(nats.url, 'retriever');
  // One search at a time, SEARCH_MS each, as a retriever whose searches are CPU work would.
  let busyUntil = 0;
  retriever.serve(contracts.search, async () => {
    const start = Math.max(Date.now(), busyUntil);
    busyUntil = start + SEARCH_MS;
    await new Promise((r) => setTimeout(r, busyUntil - Date.now()));
    searched++;
    return { items };
  });
  const ranker = await testBus(nats.url, 'ranker');
  startRanker(ranker, { delayMs: 0 });
  caller = await testBus(nats.url, 'gateway');
  buses.push(retriever, ranker, caller);
  await Promise.all(buses.map((b) => b.nc.flush()));
});

afterAll(async () => {
  for (const b of buses) if (!b.nc.isClosed()) await b.drain(500);
  await nats?.stop();
});

async function burst(prefix: string): Promise<{ answered: number; failed: number }> {
  const one = async (i: number): Promise<boolean> => {
    const out: Message[] = [];
    for await (const m of caller.stream(
      contracts.ask,
      { queryId: `${prefix}-${i}`, query: 'westerns', site: ['movies'], maxResults: 5, minScore: 0 },
      { timeoutMs: 30_000 },
    ))
      out.push(m);
    return out.some((m) => m.message_type === 'result') && !out.some((m) => m.message_type === 'error');
  };
  const outcomes = await Promise.all(Array.from({ length: BURST }, (_, i) => one(i).catch(() => false)));
  const answered = outcomes.filter(Boolean).length;
  return { answered, failed: BURST - answered };
}

async function routerWith(retrieverConcurrency: number): Promise<Bus> {
  const bus = await testBus(nats.url, 'router');
  buses.push(bus);
  startRouter(bus, {
    tools: false,
    understand: false,
    retrieveTimeoutMs: RETRIEVE_TIMEOUT_MS,
    retrieverConcurrency,
    search: { collateMs: 0 },
  });
  await bus.nc.flush();
  return bus;
}

describe('admission to the retriever', () => {
  it('answers every question of a burst when searches wait their turn', async () => {
    const router = await routerWith(4);
    searched = 0;
    expect(await burst('admitted')).toEqual({ answered: BURST, failed: 0 });
    expect(searched).toBe(BURST);
    await router.drain(500);
  }, 60_000);

  it('loses the later questions when every search is sent at once', async () => {
    const router = await routerWith(1_000_000);
    const { failed } = await burst('unadmitted');
    expect(failed).toBeGreaterThan(BURST / 4);
    await router.drain(500);
  }, 60_000);
});
