import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { StoredItem } from '@askbus/contracts';
import { Llm } from './client';
import { createLlm, llmConfigFromEnv } from './config';
import { LlmError } from './errors';
import { extractJson } from './json';
import { LocalAdapter } from './local';
import { OpenAiCompatibleAdapter } from './openai';
import { itemForPrompt, localRankAnswers, RankAnswer, RankBatchAnswer } from './ranking';
import { startFakeLlm, type FakeLlm } from './testing';

const movie = (slug: string, name: string, director: string, genre: string): StoredItem => ({
  url: `https://movies.example/${slug}`,
  name,
  site: 'movies',
  '@type': 'Movie',
  schema_object: { '@type': 'Movie', name, director: { '@type': 'Person', name: director }, genre: [genre] },
});
const items = [
  movie('pale-rider', 'Pale Rider', 'Clint Eastwood', 'Western'),
  movie('annie-hall', 'Annie Hall', 'Woody Allen', 'Comedy'),
];
const query = 'westerns with clint eastwood';
const rankPrompt = (item: StoredItem) => [
  {
    role: 'user' as const,
    content: `Score this item.\n<question>${query}</question>\n<item>${itemForPrompt(item)}</item>`,
  },
];

describe('OpenAI-compatible provider against a real local HTTP fake', () => {
  let fake: FakeLlm;
  const llm = (opts: ConstructorParameters<typeof Llm>[1] = {}) =>
    new Llm(
      new OpenAiCompatibleAdapter({ baseURL: fake.baseURL, apiKey: 'test', models: { low: 'l', high: 'h' } }),
      {
        backoffMs: 10,
        timeoutMs: 2_000,
        ...opts,
      },
    );

  beforeAll(async () => {
    fake = await startFakeLlm({ latencyMs: 0 });
  });
  afterAll(async () => fake?.close());
  beforeEach(() => {
    fake.reset();
    fake.latencyMs = 0;
  });

  it('returns JSON parsed by zod, scored as the local scorer scores', async () => {
    const l = llm();
    const answer = await l.complete({ messages: rankPrompt(items[0]!), tier: 'low', jsonSchema: RankAnswer });
    expect(answer).toEqual(localRankAnswers(query, [items[0]!])[0]);
    expect(answer.score).toBe(100);
    expect(l.counters).toMatchObject({ calls: 1, failures: 0, malformedOutputs: 0 });
    expect(l.counters.tokensIn).toBeGreaterThan(0);
    expect(l.counters.tokensOut).toBeGreaterThan(0);
  });

  it('scores a batch keyed by item index', async () => {
    const content = `<question>${query}</question>\n${items.map((it, i) => `<item index="${i}">${itemForPrompt(it)}</item>`).join('\n')}`;
    const answer = await llm().complete({
      messages: [{ role: 'user', content }],
      tier: 'low',
      jsonSchema: RankBatchAnswer,
    });
    expect(answer.results.map((r) => r.index)).toEqual([0, 1]);
    expect(answer.results.map((r) => r.score)).toEqual(localRankAnswers(query, items).map((a) => a.score));
  });

  it('makes a malformed answer an LlmError, counted, not retried', async () => {
    const l = llm();
    fake.fail({ kind: 'malformed' });
    const err = await l
      .complete({ messages: rankPrompt(items[0]!), tier: 'low', jsonSchema: RankAnswer })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect((err as LlmError).code).toBe('malformed');
    expect(fake.requests).toBe(1);
    expect(l.counters).toMatchObject({ calls: 1, failures: 1, malformedOutputs: 1, retries: 0 });
  });

  it('retries a 500 and then succeeds', async () => {
    const l = llm();
    fake.fail({ kind: 'status', status: 500 });
    const answer = await l.complete({ messages: rankPrompt(items[1]!), tier: 'low', jsonSchema: RankAnswer });
    expect(answer.score).toBe(localRankAnswers(query, [items[1]!])[0]!.score);
    expect(fake.requests).toBe(2);
    expect(l.counters).toMatchObject({ calls: 1, failures: 0, retries: 1 });
  });

  it('retries a 429 but not a 400', async () => {
    const l = llm({ maxRetries: 3 });
    fake.fail({ kind: 'status', status: 429 }, { kind: 'status', status: 400 });
    const err = await l.complete({ messages: rankPrompt(items[0]!), tier: 'low' }).catch((e: unknown) => e);
    expect((err as LlmError).code).toBe('bad_request');
    expect((err as LlmError).status).toBe(400);
    expect(fake.requests).toBe(2);
    expect(l.counters).toMatchObject({ failures: 1, retries: 1 });
  });

  it('times out an attempt that hangs, retries it, and gives up after the last attempt', async () => {
    const l = llm({ timeoutMs: 150, maxRetries: 1 });
    fake.fail({ kind: 'hang' }); // then a normal answer
    const ok = await l.complete({ messages: rankPrompt(items[0]!), tier: 'low', jsonSchema: RankAnswer });
    expect(ok.score).toBe(100);
    expect(l.counters.retries).toBe(1);

    fake.fail({ kind: 'hang' }, { kind: 'hang' });
    const started = Date.now();
    const err = await l.complete({ messages: rankPrompt(items[0]!), tier: 'low' }).catch((e: unknown) => e);
    expect((err as LlmError).code).toBe('timeout');
    expect((err as LlmError).attempts).toBe(2);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('keeps to its concurrency limit', async () => {
    fake.latencyMs = 60;
    const l = llm({ concurrency: 2 });
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        l.complete({ messages: rankPrompt(items[0]!), tier: 'low', jsonSchema: RankAnswer }),
      ),
    );
    expect(answers).toHaveLength(6);
    expect(fake.requests).toBe(6);
    expect(fake.maxConcurrent).toBe(2);
  });

  it('streams text deltas as SSE chunks arrive, and counts tokens', async () => {
    const l = llm();
    const content = `Summarize.\n<question>${query}</question>\n<item index="0">${itemForPrompt(items[0]!)}</item>`;
    const deltas: string[] = [];
    for await (const d of l.stream({ messages: [{ role: 'user', content }], tier: 'high' })) deltas.push(d);
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toContain('Pale Rider [1]');
    expect(l.counters.tokensOut).toBeGreaterThan(0);
  });

  it('stops at once when the caller aborts', async () => {
    fake.latencyMs = 5_000;
    const l = llm();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const started = Date.now();
    const err = await l
      .complete({ messages: rankPrompt(items[0]!), tier: 'low', signal: controller.signal })
      .catch((e: unknown) => e);
    expect((err as LlmError).code).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(l.counters.failures).toBe(0);
  });
});

describe('Anthropic provider against the same fake (Messages API shape)', () => {
  let fake: FakeLlm;
  beforeAll(async () => {
    fake = await startFakeLlm();
  });
  afterAll(async () => fake?.close());

  it('answers JSON by instructions, parsed by zod, and streams text deltas', async () => {
    const l = createLlm({ provider: 'anthropic', baseURL: fake.url, apiKey: 'test', maxRetries: 0 });
    const answer = await l.complete({ messages: rankPrompt(items[0]!), tier: 'low', jsonSchema: RankAnswer });
    expect(answer).toEqual(localRankAnswers(query, [items[0]!])[0]);
    const content = `Summarize.\n<question>${query}</question>\n<item index="1">${itemForPrompt(items[1]!)}</item>`;
    let text = '';
    for await (const d of l.stream({ messages: [{ role: 'user', content }], tier: 'high' })) text += d;
    expect(text).toContain('Annie Hall [1]');
    expect(l.counters).toMatchObject({ calls: 2, failures: 0 });
    expect(l.counters.tokensOut).toBeGreaterThan(0);
  });

  it('retries a 529 overload and does not retry a 401', async () => {
    const l = createLlm({
      provider: 'anthropic',
      baseURL: fake.url,
      apiKey: 'test',
      maxRetries: 2,
      backoffMs: 5,
    });
    fake.reset();
    fake.fail({ kind: 'status', status: 529 });
    await l.complete({ messages: rankPrompt(items[0]!), tier: 'low', jsonSchema: RankAnswer });
    expect(fake.requests).toBe(2);
    fake.fail({ kind: 'status', status: 401 });
    const err = await l.complete({ messages: rankPrompt(items[0]!), tier: 'low' }).catch((e: unknown) => e);
    expect((err as LlmError).code).toBe('bad_request');
    expect(fake.requests).toBe(3);
  });
});

describe('local provider', () => {
  const l = new Llm(new LocalAdapter());

  it('ranks with the deterministic scorer, one item or a batch', async () => {
    const one = await l.complete({
      messages: [],
      tier: 'low',
      jsonSchema: RankAnswer,
      task: { kind: 'rank', query, items: [items[0]!] },
    });
    expect(one).toEqual(localRankAnswers(query, [items[0]!])[0]);
    const batch = await l.complete({
      messages: [],
      tier: 'low',
      jsonSchema: RankBatchAnswer,
      task: { kind: 'rank', query, items, batch: true },
    });
    expect(batch.results.map((r) => [r.index, r.score])).toEqual([
      [0, 100],
      [1, localRankAnswers(query, [items[1]!])[0]!.score],
    ]);
  });

  it('writes a summary from the items, citing them, streamed word by word', async () => {
    const results = items.map((it, i) => ({
      '@type': 'Item' as const,
      url: it.url,
      name: it.name,
      site: it.site,
      siteUrl: it.site,
      score: 90 - i,
      description: `d${i}`,
      schema_object: it.schema_object,
    }));
    const parts: string[] = [];
    for await (const d of l.stream({
      messages: [],
      tier: 'high',
      task: { kind: 'generate', query, items: results },
    })) {
      parts.push(d);
    }
    expect(parts.length).toBeGreaterThan(5);
    expect(parts.join('')).toContain('Pale Rider [1]');
    expect(parts.join('')).toContain('Annie Hall [2]');
  });

  it('refuses a call without a task it understands', async () => {
    const err = await l
      .complete({ messages: [{ role: 'user', content: 'hi' }], tier: 'low' })
      .catch((e: unknown) => e);
    expect((err as LlmError).code).toBe('unsupported');
    expect(l.counters.failures).toBe(1);
  });
});

describe('configuration and parsing', () => {
  it('reads ASKBUS_LLM_* with the local default', () => {
    expect(llmConfigFromEnv({}).provider).toBe('local');
    const c = llmConfigFromEnv({
      ASKBUS_LLM_PROVIDER: 'openai',
      ASKBUS_LLM_BASE_URL: 'http://127.0.0.1:11434/v1',
      ASKBUS_LLM_MODEL_LOW: 'qwen',
      ASKBUS_LLM_CONCURRENCY: '4',
      ASKBUS_LLM_TIMEOUT_MS: '9000',
    });
    expect(c).toMatchObject({ provider: 'openai', modelLow: 'qwen', concurrency: 4, timeoutMs: 9000 });
    expect(() => llmConfigFromEnv({ ASKBUS_LLM_PROVIDER: 'gpt' })).toThrow(/provider/);
    expect(createLlm({ provider: 'anthropic', apiKey: 'x' }).provider).toBe('anthropic');
    expect(createLlm().provider).toBe('local');
  });

  it('finds JSON in fences and prose, and refuses what is not JSON', () => {
    expect(extractJson('```json\n{"a":1}\n```')).toEqual({ a: 1 });
    expect(extractJson('Here you go: {"a":"}"} and more')).toEqual({ a: '}' });
    expect(() => extractJson('no json')).toThrow(LlmError);
    expect(z.object({ a: z.number() }).safeParse(extractJson('{"a":1}')).success).toBe(true);
  });
});
