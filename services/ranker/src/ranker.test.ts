import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts, toRankItem, type ScoredBatch, type ScoredItem } from '@askbus/contracts';
import { BusError, type Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { startRanker } from './index';
import { movieBatch } from './fixtures';

const collect = async (stream: AsyncIterable<ScoredBatch>): Promise<ScoredItem[]> => {
  const out: ScoredItem[] = [];
  for await (const chunk of stream) out.push(...chunk.items);
  return out;
};

async function waitFor(check: () => boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('ranker over NATS', () => {
  let nats: Awaited<ReturnType<typeof testNats>>;
  let fast: Bus;
  let slow: Bus;
  let caller: Bus;
  let canceller: Bus;

  beforeAll(async () => {
    nats = await testNats();
    fast = await testBus(nats.url, 'ranker');
    slow = await testBus(nats.url, 'ranker');
    caller = await testBus(nats.url, 'router');
    canceller = await testBus(nats.url, 'gateway');
    startRanker(fast, { delayMs: 0 });
    await fast.nc.flush();
  });

  afterAll(async () => {
    for (const bus of [caller, canceller, fast, slow]) await bus?.drain(1_000);
    await nats?.stop();
  });

  it('answers the whole batch in one message, best first', async () => {
    const items = movieBatch();
    let messages = 0;
    const scored = await collect(
      (async function* () {
        for await (const batch of caller.stream(contracts.score, {
          query: 'westerns with clint eastwood',
          items: items.map(toRankItem),
        })) {
          messages++;
          yield batch;
        }
      })(),
    );
    expect(messages).toBe(1);
    expect(scored).toHaveLength(items.length);
    expect(new Set(scored.map((s) => s.url))).toEqual(new Set(items.map((i) => i.url)));
    expect(scored.map((s) => s.score)).toEqual([...scored.map((s) => s.score)].sort((a, b) => b - a));
    expect(scored[0]!.url).toBe('https://movies.example/pale-rider');
    expect(fast.stats.served).toBe(1);
  });

  it('refuses an empty batch as a bad request, at the caller and at the server', async () => {
    const err = await collect(caller.stream(contracts.score, { query: 'x', items: [] })).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BusError);
    expect((err as BusError).code).toBe('bad_request');

    // sent raw, past the caller's own check: the ranker's bus ends the stream with the error
    const reply = await caller.nc.request(
      contracts.score.subject,
      new TextEncoder().encode('{"query":"x","items":[]}'),
      {
        timeout: 5_000,
      },
    );
    expect(reply.headers?.get('Askbus-End')).toBe('error');
    expect(BusError.fromBody(reply.data).code).toBe('bad_request');
  });

  it('stops a delayed batch at once when another bus cancels the query', async () => {
    // Only the slow ranker serves from here on: the fast one leaves the queue group.
    await fast.drain(1_000);
    startRanker(slow, { delayMs: 10_000 });
    await slow.nc.flush();

    const queryId = 'cancel-test-1';
    const started = Date.now();
    const result = collect(
      caller.stream(contracts.score, { query: 'westerns', items: movieBatch().map(toRankItem) }, { queryId }),
    ).catch((e: unknown) => e);
    await waitFor(() => slow.stats.inFlight === 1);
    canceller.cancel(queryId);

    const err = await result;
    expect(err).toBeInstanceOf(BusError);
    expect((err as BusError).code).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(3_000);
    await waitFor(() => slow.stats.cancelled === 1);
    expect(slow.stats.inFlight).toBe(0);
    expect(slow.stats.served).toBe(0);
  });
});
