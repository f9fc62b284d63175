import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { contracts, toRankItem, type ScoredItem, type StoredItem } from '@askbus/contracts';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { createLlm, type LlmConfig } from '@askbus/llm';
import { startFakeLlm, type FakeLlm } from '@askbus/llm/testing';
import { createRegistry, instrumentLlm } from '@askbus/telemetry';
import { startRanker, type RankerHandle } from './index';
import { rankItems } from './rank';
import { movieBatch } from './fixtures';

// A model that answers garbage, 500s or hangs, behind the real OpenAI-compatible provider over
// HTTP, and a ranker on real NATS: every item must still come back scored (by the local
// scorer, marked so), and the model must be called a bounded number of times per query.

const query = 'westerns with clint eastwood';

/** 50 candidates as the router sends them: 5 calls of 10, all at once, for one query. */
const candidates: StoredItem[] = Array.from({ length: 10 }, (_, round) =>
  movieBatch().map((m) => ({ ...m, url: `${m.url}-${round}` })),
).flat();
/** Model requests a query can make before the circuit opens: concurrency 16 + (5 failures - 1). */
const MAX_REQUESTS = 16 + 4;
const expectedScore = new Map(rankItems(query, candidates).map((s) => [s.url, s.score]));

let nats: Awaited<ReturnType<typeof testNats>>;
let fake: FakeLlm;
let caller: Bus;
const rankers: Bus[] = [];

async function ranker(settings: Partial<LlmConfig> = {}, batch = 1): Promise<RankerHandle> {
  for (const b of rankers.splice(0)) await b.drain(500);
  const bus = await testBus(nats.url, 'ranker');
  rankers.push(bus);
  const handle = startRanker(bus, {
    llm: createLlm({ provider: 'openai', baseURL: fake.baseURL, apiKey: 'x', backoffMs: 5, ...settings }),
    llmBatchSize: batch,
  });
  await bus.nc.flush();
  return handle;
}

/** The query's ranking calls, in parallel as the router makes them; every score, or the error. */
async function rankQuery(
  queryId: string,
  items = candidates,
): Promise<{ scored: ScoredItem[]; errors: unknown[] }> {
  const scored: ScoredItem[] = [];
  const errors: unknown[] = [];
  const batches = Array.from({ length: Math.ceil(items.length / 10) }, (_, i) =>
    items.slice(i * 10, i * 10 + 10),
  );
  await Promise.all(
    batches.map(async (batch) => {
      try {
        for await (const s of caller.stream(
          contracts.score,
          { query, items: batch.map(toRankItem) },
          { queryId },
        ))
          scored.push(...s.items);
      } catch (err) {
        errors.push(err);
      }
    }),
  );
  return { scored, errors };
}

function expectAllScoredLocally(scored: ScoredItem[], reasons: string[]): void {
  expect(scored).toHaveLength(candidates.length);
  expect(new Set(scored.map((s) => s.url)).size).toBe(candidates.length);
  for (const s of scored) {
    expect(s.scoredBy).toBe('local');
    expect(reasons).toContain(s.fallbackReason);
    expect(s.score).toBe(expectedScore.get(s.url));
  }
}

beforeAll(async () => {
  nats = await testNats();
  fake = await startFakeLlm();
  caller = await testBus(nats.url, 'router');
});
afterAll(async () => {
  for (const b of [caller, ...rankers]) await b?.drain(500);
  await fake?.close();
  await nats?.stop();
});
beforeEach(() => fake.reset());

describe('a ranker whose model fails', () => {
  it('answers 500s: every item scored locally, no error, and far fewer calls than 3 per item', async () => {
    // The defaults: 2 retries a call, 4 a query, the circuit opens after 5 failures in a row.
    const r = await ranker();
    fake.failAll({ kind: 'status', status: 500 });
    const { scored, errors } = await rankQuery('q-500');
    expect(errors).toEqual([]);
    expectAllScoredLocally(scored, ['unavailable', 'circuit_open']);
    console.log(
      `HTTP 500 model: ${fake.requests} model requests for ${candidates.length} items ` +
        `(retries ${r.llm.counters.retries}, denied ${r.llm.counters.retriesDenied}, refused while open ${r.llm.counters.refusedOpen})`,
    );
    // At most: the calls in flight at once (the concurrency limit, 16), the ones that took the
    // slots of the first failures before the circuit opened (5 - 1), and the query's retry
    // budget (4). It was 150 (3 attempts × 50 items) before.
    expect(fake.requests).toBeLessThanOrEqual(MAX_REQUESTS + 4);
    expect(r.llm.counters.retries).toBeLessThanOrEqual(4);
    expect(r.llm.breakerStates()).toEqual([{ model: 'gpt-4.1-mini', state: 'open' }]);
    expect(r.stats).toMatchObject({ scoredItems: 50, fallbackItems: 50 });
  });

  it('answers garbage: every item scored locally as malformed or refused, nothing retried', async () => {
    const r = await ranker();
    fake.failAll({ kind: 'malformed' });
    const { scored, errors } = await rankQuery('q-garbage');
    expect(errors).toEqual([]);
    expectAllScoredLocally(scored, ['malformed', 'circuit_open']);
    expect(fake.requests).toBeLessThanOrEqual(MAX_REQUESTS);
    expect(r.llm.counters.retries).toBe(0);
  });

  it('hangs: every item scored locally once the attempts time out', async () => {
    const r = await ranker({ timeoutMs: 300 });
    fake.failAll({ kind: 'hang' });
    const { scored, errors } = await rankQuery('q-hang');
    expect(errors).toEqual([]);
    expectAllScoredLocally(scored, ['timeout', 'circuit_open']);
    expect(fake.requests).toBeLessThanOrEqual(MAX_REQUESTS + 4);
    expect(r.llm.counters.refusedOpen).toBeGreaterThan(0);
  });

  it('scores locally the items a batch answer left out', async () => {
    await ranker({}, 5);
    const batch = movieBatch();
    fake.fail({
      kind: 'answer',
      text: JSON.stringify({ results: [{ index: 0, score: 77, description: 'from the model' }] }),
    });
    const scored: ScoredItem[] = [];
    for await (const s of caller.stream(contracts.score, { query, items: batch.map(toRankItem) }))
      scored.push(...s.items);
    expect(scored).toHaveLength(5);
    expect(scored.find((s) => s.url === batch[0]!.url)).toMatchObject({ score: 77, scoredBy: 'model' });
    const local = scored.filter((s) => s.scoredBy === 'local');
    expect(local).toHaveLength(4);
    expect(local.every((s) => s.fallbackReason === 'incomplete')).toBe(true);
  });

  it('calls the model again after the cool-down, once it recovers', async () => {
    const r = await ranker({ breakerFailures: 2, breakerCooldownMs: 300 });
    fake.failAll({ kind: 'status', status: 503 });
    await rankQuery('q-down');
    expect(r.llm.breakerStates()[0]!.state).toBe('open');
    fake.failAll(undefined);
    await new Promise((res) => setTimeout(res, 350));
    // The first call after the cool-down is the trial; the ones beside it are still refused.
    await rankQuery('q-trial', candidates.slice(0, 1));
    expect(r.llm.breakerStates()[0]!.state).toBe('closed');
    const { scored } = await rankQuery('q-up');
    expect(scored.every((s) => s.scoredBy === 'model')).toBe(true);
  });

  it('counts fallbacks and circuit state in Prometheus metrics', async () => {
    const r = await ranker({ maxRetries: 0 });
    const registry = createRegistry();
    instrumentLlm('ranker', r.llm, registry);
    fake.failAll({ kind: 'malformed' });
    await rankQuery('q-metrics');
    const text = await registry.metrics();
    const line = (name: string, labels: string): number => {
      const m = new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(text);
      return m ? Number(m[1]) : NaN;
    };
    const malformed = line(
      'askbus_llm_fallbacks_total',
      'service="ranker",provider="openai",task="rank",reason="malformed"',
    );
    const refused = line(
      'askbus_llm_fallbacks_total',
      'service="ranker",provider="openai",task="rank",reason="circuit_open"',
    );
    expect(malformed).toBe(fake.requests);
    expect(malformed + refused).toBe(50);
    expect(
      line(
        'askbus_llm_circuit_state',
        'service="ranker",provider="openai",model="gpt-4.1-mini",state="open"',
      ),
    ).toBe(1);
    expect(
      line(
        'askbus_llm_circuit_state',
        'service="ranker",provider="openai",model="gpt-4.1-mini",state="closed"',
      ),
    ).toBe(0);
    expect(line('askbus_llm_circuit_refusals_total', 'service="ranker",provider="openai"')).toBe(refused);
  });
});
