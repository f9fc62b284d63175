import { describe, expect, it } from 'vitest';
import { AskRequest, type ScoredItem, type StoredItem } from '@askbus/contracts';
import { MAX_RANK_ITEMS, RankBatching } from './rank-batching';
import { defaultSearchSettings, runSearch, type SearchPorts } from './search-pipeline';
import { candidate } from './testing';

const scored = (n: number, over: Partial<ScoredItem> = {}): ScoredItem => ({
  url: `https://t.test/${n}`,
  score: 50,
  description: 'd',
  ...over,
});

describe('RankBatching', () => {
  it('batches until the rankers say they score locally, then sends a query in one call', () => {
    const b = new RankBatching(10);
    expect(b.size()).toBe(10);
    b.observe([]);
    expect(b.size()).toBe(10);
    // no word on who scored (a ranker of another kind): batches stay
    b.observe([scored(1), scored(2)]);
    expect(b.size()).toBe(10);
    b.observe([scored(1, { scoredBy: 'local' }), scored(2, { scoredBy: 'local' })]);
    expect(b.size()).toBe(MAX_RANK_ITEMS);
    // one item without the word is enough to doubt it
    b.observe([scored(1, { scoredBy: 'local' }), scored(2)]);
    expect(b.size()).toBe(10);
  });

  it('goes back to batches when a model scores, and stays there for a while after the last model answer', () => {
    let now = 1_000_000;
    const b = new RankBatching(10, 60_000, () => now);
    const local = [scored(1, { scoredBy: 'local' })];
    b.observe(local);
    expect(b.size()).toBe(MAX_RANK_ITEMS);
    b.observe([scored(1, { scoredBy: 'model' }), scored(2, { scoredBy: 'local' })]);
    expect(b.size()).toBe(10);
    // a local answer soon after (another replica, or a model failing over): still batches
    now += 30_000;
    b.observe(local);
    expect(b.size()).toBe(10);
    now += 30_001;
    expect(b.size()).toBe(MAX_RANK_ITEMS);
    // the local scorer standing in for a failed model is a model ranker too
    b.observe([scored(1, { scoredBy: 'local', fallbackReason: 'timeout' })]);
    expect(b.size()).toBe(10);
  });

  it('decides how runSearch cuts its candidates into ranking calls', async () => {
    const candidates = Array.from({ length: 25 }, (_, i) => candidate(i));
    const batching = new RankBatching(10);
    const calls: StoredItem[][] = [];
    const ports: SearchPorts = {
      retrieve: async () => candidates,
      score: async function* (_q, items) {
        calls.push(items);
        const out = items.map((it) => ({
          url: it.url,
          score: 70,
          description: 'd',
          scoredBy: 'local' as const,
        }));
        batching.observe(out);
        yield out;
      },
      rankBatchSize: () => batching.size(),
    };
    const ask = AskRequest.parse({ queryId: 'q', query: 'anything', site: ['t'] });
    const run = async () => {
      for await (const _ of runSearch(ask, ports, new AbortController().signal, defaultSearchSettings))
        void _;
    };
    await run();
    expect(calls.map((c) => c.length)).toEqual([10, 10, 5]);
    calls.length = 0;
    await run();
    expect(calls.map((c) => c.length)).toEqual([25]);
  });
});
