import { describe, expect, it } from 'vitest';
import { AskRequest, Message, type ScoredItem, type StoredItem } from '@askbus/contracts';
import { runAsk } from './ask-pipeline';
import { defaultSearchSettings, runSearch, type SearchPorts } from './search-pipeline';
import { UNRANKED_NO_RANKER } from './degrade';
import { candidate } from './testing';

/** Fake ports: scores come from a table, each batch after a delay of its own. */
function ports(
  scores: Record<number, number>,
  opts: { delays?: number[]; failBatch?: number } = {},
): SearchPorts & {
  batches: StoredItem[][];
} {
  const batches: StoredItem[][] = [];
  return {
    batches,
    retrieve: async () => Object.keys(scores).map((k) => candidate(Number(k))),
    score: async function* (_q, items): AsyncGenerator<ScoredItem[]> {
      const index = batches.push(items) - 1;
      await new Promise((r) => setTimeout(r, opts.delays?.[index] ?? 0));
      if (opts.failBatch === index) throw new Error('ranker died');
      for (const it of items) {
        const n = Number(it.url.split('/').pop());
        yield [{ url: it.url, score: scores[n]!, description: `d${n}` }];
      }
    },
  };
}

const request = (over: Partial<AskRequest> = {}): AskRequest =>
  AskRequest.parse({ queryId: 'q', query: 'anything', site: ['t'], ...over });

async function collect<T, R>(gen: AsyncGenerator<T, R>): Promise<{ out: T[]; ret: R }> {
  const out: T[] = [];
  for (;;) {
    const step = await gen.next();
    if (step.done) return { out, ret: step.value };
    out.push(step.value);
  }
}

const signal = new AbortController().signal;

describe('runSearch', () => {
  it('sends early results best first within a burst, then fills up in score order', async () => {
    const p = ports({ 1: 70, 2: 95, 3: 55, 4: 80, 5: 30, 6: 52 }, { delays: [0, 60] });
    const { out, ret } = await collect(
      runSearch(request(), p, signal, { ...defaultSearchSettings, rankBatchSize: 3 }),
    );
    const results = out
      .filter((m) => m.message_type === 'result')
      .map((m) => (m as { content: { score: number }[] }).content.map((c) => c.score));
    // batch 1 (items 1-3) arrives first: 95 and 70 go early, best first; 55 waits;
    // batch 2 (4-6) arrives last, so its 80 joins the final fill: the rest above 51, best first.
    expect(results).toEqual([
      [95, 70],
      [80, 55, 52],
    ]);
    expect(ret.map((r) => r.score)).toEqual([95, 80, 70, 55, 52]);
  });

  it('joins each batch of scores to the whole items by URL: unknown URLs and repeats are ignored', async () => {
    const p: SearchPorts = {
      retrieve: async () => [1, 2, 3].map(candidate),
      score: async function* (_q, items): AsyncGenerator<ScoredItem[]> {
        yield [
          ...items.map((it) => ({ url: it.url, score: 90, description: `d ${it.name}` })),
          { url: 'https://t.test/not-sent', score: 99, description: 'x' },
          { url: items[0]!.url, score: 10, description: 'again' },
        ];
      },
    };
    const stats = { retrieved: 0, scored: 0, failedBatches: 0, sent: 0 };
    const { ret } = await collect(
      runSearch(request(), p, signal, { ...defaultSearchSettings, rankBatchSize: 3 }, stats),
    );
    expect(ret.map((r) => [r.url, r.score, r.description])).toEqual(
      [1, 2, 3].map((n) => [`https://t.test/${n}`, 90, `d Item ${n}`]),
    );
    // the whole item, as retrieved, not what the ranker was sent
    expect(ret[0]!.schema_object).toEqual(candidate(1).schema_object);
    expect(stats.scored).toBe(3);
  });

  it('never sends more than max_results and respects min_score', async () => {
    const scores: Record<number, number> = {};
    for (let i = 1; i <= 30; i++) scores[i] = 40 + i * 2; // 42 .. 100
    const { ret } = await collect(runSearch(request({ maxResults: 5, minScore: 60 }), ports(scores), signal));
    expect(ret).toHaveLength(5);
    expect(ret.every((r) => r.score > 60)).toBe(true);
    expect(ret[0]!.score).toBe(100);
  });

  it('reports a failed ranking batch and keeps the others', async () => {
    const { out, ret } = await collect(
      runSearch(request(), ports({ 1: 90, 2: 80, 3: 70 }, { failBatch: 1 }), signal, {
        ...defaultSearchSettings,
        rankBatchSize: 1,
      }),
    );
    expect(ret.map((r) => r.score)).toEqual([90, 70]);
    expect(out.some((m) => m.message_type === 'status')).toBe(true);
  });

  it('answers with the candidates unranked, and says so, when every ranking batch fails', async () => {
    const stats = { retrieved: 0, scored: 0, failedBatches: 0, sent: 0 };
    const { out, ret } = await collect(
      runSearch(request(), ports({ 1: 90, 2: 80 }, { failBatch: 0 }), signal, defaultSearchSettings, stats),
    );
    expect(out.map((m) => m.message_type)).toEqual(['status', 'result']);
    expect((out[0] as { content: string }).content).toMatch(
      /No ranker could score the candidates \(internal: ranker died\): these 2 of 2 candidates are unranked/,
    );
    expect(ret.map((r) => [r.url, r.score, r.description])).toEqual([
      ['https://t.test/1', 0, UNRANKED_NO_RANKER],
      ['https://t.test/2', 0, UNRANKED_NO_RANKER],
    ]);
    expect(stats).toMatchObject({ unranked: 2, sent: 2 });
  });

  it('says so when nothing is retrieved', async () => {
    const { out } = await collect(runSearch(request(), ports({}), signal));
    expect(out.map((m) => m.message_type)).toEqual(['no_results']);
  });
});

describe('runAsk', () => {
  it('brackets the messages with begin and end, each a valid Message', async () => {
    const { out } = await collect(runAsk(request({ mode: 'summarize' }), ports({ 1: 90, 2: 70 }), signal));
    for (const m of out) expect(Message.safeParse(m).success).toBe(true);
    expect(out[0]!.message_type).toBe('begin-nlweb-response');
    expect(out.at(-1)!.message_type).toBe('end-nlweb-response');
    expect(out.some((m) => m.message_type === 'result' && '@type' in m && m['@type'] === 'Summary')).toBe(
      true,
    );
  });

  it('turns a failure into an error message and an end marked as error', async () => {
    const failing: SearchPorts = {
      retrieve: async () => {
        throw Object.assign(new Error('no service answers retrieve.v1.search'), { code: 'no_responders' });
      },
      score: async function* () {},
    };
    const { out } = await collect(runAsk(request(), failing, signal));
    expect(out.map((m) => m.message_type)).toEqual(['begin-nlweb-response', 'error', 'end-nlweb-response']);
    expect(out[1]).toMatchObject({ code: 'no_responders' });
    expect(out[2]).toMatchObject({ error: true });
  });
});

describe('ranking failures', () => {
  it('re-sends the unscored items of a call whose replica vanished, once', async () => {
    let calls = 0;
    const p: SearchPorts = {
      retrieve: async () => [1, 2, 3].map(candidate),
      score: async function* (_q, items): AsyncGenerator<ScoredItem[]> {
        calls++;
        const first = calls === 1;
        for (const it of items) {
          yield [{ url: it.url, score: 90, description: 'd' }];
          if (first) throw Object.assign(new Error('sent nothing for 400 ms'), { code: 'timeout' });
        }
      },
    };
    const stats = { retrieved: 0, scored: 0, failedBatches: 0, sent: 0 };
    const { ret } = await collect(
      runSearch(request(), p, signal, { ...defaultSearchSettings, rankBatchSize: 3 }, stats),
    );
    expect(ret).toHaveLength(3);
    expect(calls).toBe(2);
    expect(stats).toMatchObject({ retriedBatches: 1, missingItems: 0, failedBatches: 0 });
  });

  it('does not re-send after an internal error, and reports the missing items', async () => {
    let calls = 0;
    const p: SearchPorts = {
      retrieve: async () => [1, 2, 3].map(candidate),
      score: async function* (_q, items): AsyncGenerator<ScoredItem[]> {
        calls++;
        yield [{ url: items[0]!.url, score: 90, description: 'd' }];
        throw Object.assign(new Error('ranking failed for 2 of 3 items'), { code: 'internal' });
      },
    };
    const stats = { retrieved: 0, scored: 0, failedBatches: 0, sent: 0 };
    const { out, ret } = await collect(
      runSearch(request(), p, signal, { ...defaultSearchSettings, rankBatchSize: 3 }, stats),
    );
    expect(calls).toBe(1);
    expect(ret).toHaveLength(1);
    expect(stats).toMatchObject({ missingItems: 2, failedBatches: 1 });
    const status = out.find((m) => m.message_type === 'status') as { content: string };
    expect(status.content).toMatch(/2 of 3 items could not be ranked/);
  });
});
