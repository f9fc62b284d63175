import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { contracts, toRankItem, Understanding, type ScoredItem, type StoredItem } from '@askbus/contracts';
import type { BusError, Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { createLlm, loadPrompts, rankingPromptFor } from '@askbus/llm';
import { startFakeLlm, type FakeLlm } from '@askbus/llm/testing';
import { startRanker, type RankerHandle } from './index';
import { rankItems } from './rank';
import { movieBatch } from './fixtures';

const query = 'westerns with clint eastwood';

describe('prompt configuration', () => {
  it('loads config/prompts.json with overrides per type', () => {
    const prompts = loadPrompts();
    expect(rankingPromptFor(prompts, 'Movie').key).toBe('Movie');
    expect(rankingPromptFor(prompts, 'Car').key).toBe('Product');
    expect(rankingPromptFor(prompts, 'Recipe').prompt).toContain('{item.description}');
    expect(rankingPromptFor(prompts, 'Restaurant').key).toBe('default');
    for (const key of ['Movie', 'Product', 'Recipe', 'default']) {
      const p = rankingPromptFor(prompts, key);
      expect(p.prompt).toContain('<question>{request.query}</question>');
      expect(p.batchPrompt).toContain('{items}');
    }
  });
});

describe('ranker with a language model (OpenAI-compatible fake over HTTP, real NATS)', () => {
  let nats: Awaited<ReturnType<typeof testNats>>;
  let fake: FakeLlm;
  let caller: Bus;
  const rankers: Bus[] = [];

  const collect = async (items: StoredItem[]) => {
    const out: { scored: ScoredItem; at: number }[] = [];
    const t0 = Date.now();
    try {
      for await (const batch of caller.stream(contracts.score, { query, items: items.map(toRankItem) }))
        for (const s of batch.items) out.push({ scored: s, at: Date.now() - t0 });
      return { out };
    } catch (err) {
      return { out, err: err as BusError };
    }
  };
  const expected = new Map(rankItems(query, movieBatch()).map((s) => [s.url, s]));

  async function ranker(batch: number): Promise<RankerHandle> {
    // Only one ranker serves at a time: drain the previous one.
    for (const b of rankers.splice(0)) await b.drain(500);
    const bus = await testBus(nats.url, 'ranker');
    rankers.push(bus);
    const handle = startRanker(bus, {
      llm: createLlm({ provider: 'openai', baseURL: fake.baseURL, apiKey: 'x', maxRetries: 0, backoffMs: 1 }),
      llmBatchSize: batch,
    });
    await bus.nc.flush();
    return handle;
  }

  beforeAll(async () => {
    nats = await testNats();
    fake = await startFakeLlm({ latencyMs: 20 });
    caller = await testBus(nats.url, 'router');
  });
  afterAll(async () => {
    for (const b of [caller, ...rankers]) await b?.drain(500);
    await fake?.close();
    await nats?.stop();
  });
  beforeEach(() => fake.reset());

  it('makes one call per item (NLWeb) with the Movie prompt, scores as the local scorer does', async () => {
    const r = await ranker(1);
    const { out, err } = await collect(movieBatch());
    expect(err).toBeUndefined();
    expect(out).toHaveLength(5);
    for (const { scored } of out) {
      expect(scored.score).toBe(expected.get(scored.url)!.score);
      expect(scored.description).toBe(expected.get(scored.url)!.description);
    }
    expect(fake.requests).toBe(5);
    expect(r.stats).toMatchObject({ requests: 1, llmCalls: 5, scoredItems: 5, fallbackItems: 0 });
    expect(out.every(({ scored }) => scored.scoredBy === 'model' && !scored.fallbackReason)).toBe(true);
    expect(fake.prompts.every((p) => p.includes('following movie'))).toBe(true);
  });

  it('streams each item as soon as its call answers', async () => {
    await ranker(1);
    fake.fail({ kind: 'delay', ms: 400 }); // the first call is slow
    const { out } = await collect(movieBatch());
    expect(out).toHaveLength(5);
    expect(out[0]!.at).toBeLessThan(300);
    expect(out.at(-1)!.scored.url).toBe(movieBatch()[0]!.url);
    expect(out.at(-1)!.at).toBeGreaterThanOrEqual(400);
  });

  it('scores a batch in one call per prompt type', async () => {
    const r = await ranker(8);
    const recipe: StoredItem = {
      url: 'https://food.example/chili',
      name: 'Cowboy Chili',
      site: 'food',
      '@type': 'Recipe',
      schema_object: { '@type': 'Recipe', name: 'Cowboy Chili', recipeCuisine: 'Western' },
    };
    const { out, err } = await collect([...movieBatch(), recipe]);
    expect(err).toBeUndefined();
    expect(out).toHaveLength(6);
    expect(fake.requests).toBe(2);
    expect(r.stats.llmCalls).toBe(2);
    for (const { scored } of out.filter((o) => o.scored.url !== recipe.url)) {
      expect(scored.score).toBe(expected.get(scored.url)!.score);
    }
    // a batch of one recipe uses the single-item Recipe prompt
    expect(fake.prompts.some((p) => p.includes('The recipe is'))).toBe(true);
    expect(fake.prompts.some((p) => p.includes('The movies are'))).toBe(true);
  });

  it('stops the model calls at once when the query is cancelled', async () => {
    const r = await ranker(1);
    fake.latencyMs = 5_000;
    const queryId = 'llm-cancel-1';
    const started = Date.now();
    const pending = (async () => {
      for await (const _ of caller.stream(
        contracts.score,
        { query, items: movieBatch().map(toRankItem) },
        { queryId },
      )) {
        // nothing arrives before the cancel
      }
    })().catch((e: unknown) => e);
    while (fake.requests < 5) await new Promise((res) => setTimeout(res, 5));
    caller.cancel(queryId);
    const err = await pending;
    fake.latencyMs = 20;
    expect((err as BusError).code).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(r.llm.counters.failures).toBe(0);
    expect(r.stats.fallbackItems).toBe(0);
  });

  it('scores an item whose answer was malformed with the local scorer, marked so', async () => {
    const r = await ranker(1);
    fake.fail({ kind: 'malformed' });
    const { out, err } = await collect(movieBatch());
    expect(err).toBeUndefined();
    expect(out).toHaveLength(5);
    const local = out.filter(({ scored }) => scored.scoredBy === 'local');
    expect(local).toHaveLength(1);
    expect(local[0]!.scored).toMatchObject({ fallbackReason: 'malformed' });
    expect(local[0]!.scored.score).toBe(expected.get(local[0]!.scored.url)!.score);
    expect(r.stats).toMatchObject({ fallbackItems: 1, scoredItems: 5 });
    expect(r.llm.counters.malformedOutputs).toBe(1);
    expect(r.llm.fallbackCounts()).toEqual([{ task: 'rank', reason: 'malformed', count: 1 }]);
  });

  it('tells the model what the question was understood to require', async () => {
    await ranker(1);
    fake.reset();
    const understanding = Understanding.parse({
      text: query,
      constraints: [
        { kind: 'value', path: 'genre', values: ['western'], phrase: 'westerns', text: 'in Western' },
      ],
      orders: [
        {
          target: { path: 'aggregateRating' },
          direction: 'desc',
          strength: 'sort',
          phrase: 'best',
          text: 'highest rating',
        },
      ],
      noun: 'movies',
    });
    for await (const _ of caller.stream(contracts.score, {
      query,
      items: movieBatch().slice(0, 1).map(toRankItem),
      understanding,
    }))
      void _;
    expect(fake.prompts.at(-1)).toContain(
      'The question was understood as asking for movies: in Western; sorted by highest rating.',
    );
  });
});
