import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ResultItem, StoredItem } from '@askbus/contracts';
import { Llm, type LlmOptions } from './client';
import { createLlm, llmConfigFromEnv } from './config';
import { LlmError } from './errors';
import { completeOrLocal, streamOrLocal, type Fallback } from './fallback';
import { OpenAiCompatibleAdapter } from './openai';
import { compose } from './local';
import { itemForPrompt, localRankAnswers, RankAnswer } from './ranking';
import { localTaskAnswer, taskPrompt, ToolScoreAnswer, type RoutingTask } from './tasks';
import { RetryBudgets } from './retry-budget';
import type { CallOptions } from './types';
import { startFakeLlm, type FakeLlm } from './testing';

// The real OpenAI-compatible provider against a real HTTP server that answers garbage, 500s or
// hangs: every failure must end in the local answer, a bounded number of calls, and counters.

const pale: StoredItem = {
  url: 'https://movies.example/pale-rider',
  name: 'Pale Rider',
  site: 'movies',
  '@type': 'Movie',
  schema_object: { '@type': 'Movie', name: 'Pale Rider', director: 'Clint Eastwood', genre: ['Western'] },
};
const query = 'westerns with clint eastwood';
const rankCall = (extra: Partial<CallOptions> = {}) => ({
  messages: [
    { role: 'user' as const, content: `<question>${query}</question>\n<item>${itemForPrompt(pale)}</item>` },
  ],
  tier: 'low' as const,
  jsonSchema: RankAnswer,
  task: { kind: 'rank' as const, query, items: [pale] },
  ...extra,
});
const toolTask: RoutingTask = {
  kind: 'tool_score',
  query: 'compare Pale Rider and Unforgiven',
  itemType: 'Movie',
  tool: { name: 'compare', examples: ['compare Alien and Aliens'], params: ['item1_name', 'item2_name'] },
};

let fake: FakeLlm;
const llm = (opts: LlmOptions = {}): Llm =>
  new Llm(
    new OpenAiCompatibleAdapter({
      baseURL: fake.baseURL,
      apiKey: 'test',
      models: { low: 'm-low', high: 'm-high' },
    }),
    { backoffMs: 1, timeoutMs: 2_000, ...opts },
  );

beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => fake?.close());
beforeEach(() => fake.reset());

describe('circuit breaker per provider + model', () => {
  it('opens after N consecutive failures, then refuses at once without calling the model', async () => {
    const l = llm({ maxRetries: 0, breaker: { failures: 3, cooldownMs: 60_000 } });
    fake.failAll({ kind: 'status', status: 500 });
    for (let i = 0; i < 3; i++) {
      const err = await l.complete(rankCall()).catch((e: unknown) => e);
      expect((err as LlmError).code).toBe('unavailable');
    }
    expect(l.breakerStates()).toEqual([{ model: 'm-low', state: 'open' }]);
    const err = await l.complete(rankCall()).catch((e: unknown) => e);
    expect((err as LlmError).code).toBe('circuit_open');
    expect(fake.requests).toBe(3); // the fourth never reached the model
    expect(l.counters.refusedOpen).toBe(1);
    // Another model of the same provider has its own breaker.
    fake.failAll(undefined);
    await expect(
      l.complete({ messages: [{ role: 'user', content: 'hi' }], tier: 'high' }),
    ).resolves.toBeTypeOf('string');
    expect(l.breakerStates()).toContainEqual({ model: 'm-high', state: 'closed' });
  });

  it('counts malformed answers and timeouts, not cancels', async () => {
    const l = llm({ maxRetries: 0, timeoutMs: 100, breaker: { failures: 2, cooldownMs: 60_000 } });
    fake.fail({ kind: 'hang' });
    const controller = new AbortController();
    const cancelled = l.complete(rankCall({ signal: controller.signal })).catch((e: unknown) => e);
    while (fake.requests < 1) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    expect(((await cancelled) as LlmError).code).toBe('cancelled');
    expect(l.breakerStates()[0]!.state).toBe('closed');
    fake.fail({ kind: 'malformed' }, { kind: 'hang' });
    expect(((await l.complete(rankCall()).catch((e: unknown) => e)) as LlmError).code).toBe('malformed');
    expect(((await l.complete(rankCall()).catch((e: unknown) => e)) as LlmError).code).toBe('timeout');
    expect(l.breakerStates()[0]!.state).toBe('open');
  });

  it('half-opens after the cool-down: one trial call, closed by its success', async () => {
    const l = llm({ maxRetries: 0, breaker: { failures: 1, cooldownMs: 300 } });
    fake.fail({ kind: 'status', status: 503 });
    await l.complete(rankCall()).catch(() => undefined);
    expect(l.breakerStates()[0]!.state).toBe('open');
    await new Promise((r) => setTimeout(r, 350));
    // The trial call is slow; a call made meanwhile is refused, not queued behind it.
    fake.fail({ kind: 'delay', ms: 1_000 });
    const trial = l.complete(rankCall());
    while (fake.requests < 2) await new Promise((r) => setTimeout(r, 5));
    expect(l.breakerStates()[0]!.state).toBe('half_open');
    expect(((await l.complete(rankCall()).catch((e: unknown) => e)) as LlmError).code).toBe('circuit_open');
    expect((await trial).score).toBe(100);
    expect(l.breakerStates()[0]!.state).toBe('closed');
    expect(fake.requests).toBe(2);
  });

  it('re-opens when the trial call fails', async () => {
    const l = llm({ maxRetries: 0, breaker: { failures: 1, cooldownMs: 200 } });
    fake.failAll({ kind: 'status', status: 500 });
    await l.complete(rankCall()).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 250));
    await l.complete(rankCall()).catch(() => undefined);
    expect(fake.requests).toBe(2);
    expect(l.breakerStates()[0]!.state).toBe('open');
    expect(((await l.complete(rankCall()).catch((e: unknown) => e)) as LlmError).code).toBe('circuit_open');
    expect(fake.requests).toBe(2);
  });
});

describe('retry budget per query', () => {
  it('bounds the retries of all the calls of one query, not each call', async () => {
    // A breaker that never opens, to see the budget alone.
    const l = llm({ maxRetries: 2, retryBudget: 3, breaker: { failures: 1_000, cooldownMs: 1_000 } });
    fake.failAll({ kind: 'status', status: 500 });
    const calls = Array.from({ length: 10 }, () =>
      l.complete(rankCall({ queryId: 'q-budget' })).catch((e: unknown) => e),
    );
    const errs = await Promise.all(calls);
    expect(errs.every((e) => e instanceof LlmError && e.code === 'unavailable')).toBe(true);
    expect(fake.requests).toBe(10 + 3);
    expect(l.counters.retries).toBe(3);
    // 7 calls were refused their first retry, the 3 that retried were refused a second.
    expect(l.counters.retriesDenied).toBe(10);
    expect(l.retriesLeft('q-budget')).toBe(0);
    // Another query has its own budget; a call without a query has its own maxRetries.
    fake.reset();
    fake.failAll({ kind: 'status', status: 500 });
    await l.complete(rankCall({ queryId: 'q-other' })).catch(() => undefined);
    await l.complete(rankCall()).catch(() => undefined);
    expect(fake.requests).toBe(3 + 3);
  });

  it('forgets old queries', () => {
    const budgets = new RetryBudgets(1, 60_000, 2);
    expect(budgets.take('a')).toBe(true);
    expect(budgets.take('a')).toBe(false);
    budgets.take('b');
    budgets.take('c'); // over maxQueries: 'a' is forgotten
    expect(budgets.remaining('a')).toBe(1);
  });
});

describe('fallback to the local answer', () => {
  it('scores with the local scorer when the answer is garbage, and counts it', async () => {
    const l = llm();
    fake.failAll({ kind: 'malformed' });
    const { answer, fallback } = await completeOrLocal(l, rankCall());
    expect(answer).toEqual(localRankAnswers(query, [pale])[0]);
    expect(fallback?.reason).toBe('malformed');
    expect(l.fallbackCounts()).toEqual([{ task: 'rank', reason: 'malformed', count: 1 }]);
  });

  it('scores a tool locally when the model answers 500, within the budget', async () => {
    const l = llm({ maxRetries: 2 });
    fake.failAll({ kind: 'status', status: 500 });
    const { answer, fallback } = await completeOrLocal(l, {
      messages: [{ role: 'user', content: taskPrompt('Score the tool.', toolTask) }],
      tier: 'high',
      jsonSchema: ToolScoreAnswer,
      task: toolTask,
    });
    expect(answer).toEqual(localTaskAnswer(toolTask));
    expect(fallback).toMatchObject({ reason: 'unavailable' });
    expect(fake.requests).toBe(3);
  });

  it('falls back after a hang times out', async () => {
    const l = llm({ maxRetries: 0, timeoutMs: 150 });
    fake.fail({ kind: 'hang' });
    const { answer, fallback } = await completeOrLocal(l, rankCall());
    expect(fallback?.reason).toBe('timeout');
    expect(answer.score).toBe(100);
  });

  it('does not fall back from a cancel: the cancel goes on', async () => {
    const l = llm();
    fake.fail({ kind: 'hang' });
    const controller = new AbortController();
    const pending = completeOrLocal(l, rankCall({ signal: controller.signal })).catch((e: unknown) => e);
    setTimeout(() => controller.abort(), 20);
    expect(((await pending) as LlmError).code).toBe('cancelled');
    expect(l.fallbackCounts()).toEqual([]);
  });

  it('streams the local composer when the model fails before its first delta', async () => {
    const l = llm({ maxRetries: 0 });
    fake.failAll({ kind: 'status', status: 500 });
    const items: ResultItem[] = [
      {
        '@type': 'Item',
        url: pale.url,
        name: pale.name,
        site: 'movies',
        siteUrl: 'movies',
        score: 90,
        description: 'A western.',
        schema_object: pale.schema_object,
      },
    ];
    const task = { kind: 'summarize' as const, query, items };
    const fallbacks: Fallback[] = [];
    let text = '';
    for await (const d of streamOrLocal(
      l,
      { messages: [{ role: 'user', content: 'Summarize' }], tier: 'high', task },
      (f) => fallbacks.push(f),
    )) {
      text += d;
    }
    expect(text).toBe(compose(task));
    expect(fallbacks).toMatchObject([{ reason: 'unavailable' }]);
    expect(l.fallbackCounts()).toEqual([{ task: 'summarize', reason: 'unavailable', count: 1 }]);
  });
});

describe('settings', () => {
  it('reads the retry budget and breaker settings from ASKBUS_LLM_*', () => {
    expect(llmConfigFromEnv({})).toMatchObject({
      retryBudget: 4,
      breakerFailures: 5,
      breakerCooldownMs: 30_000,
    });
    expect(
      llmConfigFromEnv({
        ASKBUS_LLM_RETRY_BUDGET: '0',
        ASKBUS_LLM_BREAKER_FAILURES: '2',
        ASKBUS_LLM_BREAKER_COOLDOWN_MS: '5000',
      }),
    ).toMatchObject({ retryBudget: 0, breakerFailures: 2, breakerCooldownMs: 5000 });
    expect(() => llmConfigFromEnv({ ASKBUS_LLM_BREAKER_FAILURES: '0' })).toThrow(/breakerFailures/);
  });

  it('gives createLlm the settings (a budget of 0: no retry for a query)', async () => {
    const l = createLlm({
      provider: 'openai',
      baseURL: fake.baseURL,
      apiKey: 'x',
      maxRetries: 3,
      retryBudget: 0,
      backoffMs: 1,
      breakerFailures: 2,
    });
    fake.failAll({ kind: 'status', status: 500 });
    await l.complete(rankCall({ queryId: 'q0' })).catch(() => undefined);
    expect(fake.requests).toBe(1);
    await l.complete(rankCall({ queryId: 'q0' })).catch(() => undefined);
    expect(l.breakerStates()[0]!.state).toBe('open');
  });
});
