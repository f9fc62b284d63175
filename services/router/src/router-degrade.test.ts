import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AskRequest, contracts, Message, type ResultItem, type RetrievedItem } from '@askbus/contracts';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { createLlm, Llm, loadPrompts, LocalAdapter, type LlmConfig } from '@askbus/llm';
import { startFakeLlm, type FakeLlm } from '@askbus/llm/testing';
import { startRanker } from '@askbus/ranker';
import { UNRANKED_NO_RANKER } from './degrade';
import { startRouter } from './index';
import { postRanking } from './post-ranking';
import type { RoutingStats } from './route';

// The whole query path on a real NATS (a fake retriever, a real ranker, the real router with its
// tools) with the real OpenAI-compatible provider, in the ranker and in the router, pointed at a
// real HTTP server that answers garbage, HTTP 500 or nothing: the query must answer with results
// scored by the local scorer, say so, and never end in an error.

const candidates: RetrievedItem[] = Array.from({ length: 20 }, (_, i) => ({
  url: `https://movies.example/w${i}`,
  name: `Western ${i}`,
  site: 'movies',
  '@type': 'Movie',
  schema_object: {
    '@type': 'Movie',
    name: `Western ${i}`,
    genre: i % 2 === 0 ? ['Western'] : ['Drama'],
    director: { '@type': 'Person', name: i % 3 === 0 ? 'Clint Eastwood' : 'Someone Else' },
  },
  retrievalScore: 100 - i,
}));

let nats: Awaited<ReturnType<typeof testNats>>;
let fake: FakeLlm;
let retriever: Bus;
let caller: Bus;
let routed: RoutingStats | undefined;
const started: Bus[] = [];

const llmSettings = (extra: Partial<LlmConfig> = {}): Partial<LlmConfig> => ({
  provider: 'openai',
  baseURL: fake.baseURL,
  apiKey: 'x',
  backoffMs: 5,
  ...extra,
});

/** A ranker and a router, each with its own client of the (failing) model, as two processes would. */
async function services(extra: Partial<LlmConfig> = {}): Promise<void> {
  for (const b of started.splice(0)) await b.drain(500);
  const ranker = await testBus(nats.url, 'ranker', { heartbeatMs: 200 });
  startRanker(ranker, { llm: createLlm(llmSettings(extra)) });
  const router = await testBus(nats.url, 'router', { inactivityMs: 2_000 });
  startRouter(router, {
    model: { llm: createLlm(llmSettings(extra)), prompts: loadPrompts() },
    search: { rankBatchSize: 5, collateMs: 5 },
    onRouted: (s) => (routed = s),
  });
  started.push(ranker, router);
  await Promise.all(started.map((b) => b.nc.flush()));
}

async function ask(queryId: string, mode: 'list' | 'summarize' = 'summarize'): Promise<Message[]> {
  const out: Message[] = [];
  for await (const m of caller.stream(
    contracts.ask,
    { queryId, query: 'westerns with clint eastwood', site: ['movies'], maxResults: 50, minScore: 0, mode },
    { timeoutMs: 20_000 },
  )) {
    out.push(m);
  }
  return out;
}
const results = (msgs: Message[]): ResultItem[] =>
  msgs.flatMap((m) => (m.message_type === 'result' && Array.isArray(m.content) ? m.content : []));
const statuses = (msgs: Message[]): string[] =>
  msgs.flatMap((m) => (m.message_type === 'status' ? [m.content] : []));

/** Every message valid, no error, an ordinary end, every candidate answered with a score. */
function expectDegradedAnswer(msgs: Message[]): ResultItem[] {
  for (const m of msgs) expect(Message.safeParse(m).success).toBe(true);
  expect(msgs.filter((m) => m.message_type === 'error')).toEqual([]);
  expect(msgs.at(-1)).toMatchObject({ message_type: 'end-nlweb-response' });
  expect(msgs.at(-1)).not.toHaveProperty('error');
  const got = results(msgs);
  expect(got).toHaveLength(candidates.length);
  expect(got.filter((r) => r.score > 0).length).toBeGreaterThan(0);
  return got;
}

beforeAll(async () => {
  nats = await testNats();
  fake = await startFakeLlm();
  retriever = await testBus(nats.url, 'retriever');
  retriever.serve(contracts.search, async () => ({ items: candidates }));
  retriever.serve(contracts.sites, async () => ({
    sites: [{ name: 'movies', itemCount: 20, types: ['Movie'] }],
  }));
  caller = await testBus(nats.url, 'gateway');
  await retriever.nc.flush();
});
afterAll(async () => {
  for (const b of [caller, retriever, ...started]) if (!b.nc.isClosed()) await b.drain(500);
  await fake?.close();
  await nats?.stop();
});
beforeEach(() => {
  fake.reset();
  routed = undefined;
});

describe('a query while the model fails', () => {
  it('answers HTTP 500: results scored locally, statuses saying so, the summary by the local composer', async () => {
    await services();
    fake.failAll({ kind: 'status', status: 500 });
    const msgs = await ask('degrade-500');
    const got = expectDegradedAnswer(msgs);
    const notes = statuses(msgs);
    expect(notes).toContainEqual(
      expect.stringMatching(
        /^20 of 20 items were scored by the local scorer instead of the language model: .*the model (was unavailable|kept failing)/,
      ),
    );
    expect(notes).toContainEqual(
      expect.stringMatching(/^The summary was written from the items by the local composer/),
    );
    expect(msgs.some((m) => m.message_type === 'result' && '@type' in m && m['@type'] === 'Summary')).toBe(
      true,
    );
    // Best first, by the local scorer: the Eastwood westerns lead.
    expect(got[0]!.name).toMatch(/^Western (0|6|12|18)$/);
    // Tool selection fell back to the local tool scorer and chose search.
    expect(routed).toMatchObject({ tool: 'search' });
    expect(routed!.selection.scoredLocally).toBeGreaterThan(0);
    console.log(`HTTP 500 model: ${fake.requests} model requests for one query (router + ranker)`);
    // Each of the two clients: ≤ its concurrency (16) + breaker threshold - 1 (4) + retry budget (4).
    expect(fake.requests).toBeLessThanOrEqual(2 * (16 + 4 + 4));
  });

  it('answers garbage: results scored locally and no error', async () => {
    await services();
    fake.failAll({ kind: 'malformed' });
    const msgs = await ask('degrade-garbage', 'list');
    expectDegradedAnswer(msgs);
    expect(statuses(msgs)).toContainEqual(
      expect.stringMatching(
        /^20 of 20 items were scored by the local scorer .*the model's answer was malformed/,
      ),
    );
  });

  it('hangs: the attempts time out, results scored locally and no error', async () => {
    await services({ timeoutMs: 300 });
    fake.failAll({ kind: 'hang' });
    const msgs = await ask('degrade-hang');
    expectDegradedAnswer(msgs);
    expect(statuses(msgs)).toContainEqual(
      expect.stringMatching(/items were scored by the local scorer .*the model did not answer in time/),
    );
  });

  it('recovers: once the model answers again (after the cool-down), nothing is scored locally', async () => {
    await services({ breakerCooldownMs: 200 });
    fake.failAll({ kind: 'status', status: 500 });
    await ask('degrade-before', 'list');
    fake.failAll(undefined);
    await new Promise((r) => setTimeout(r, 250));
    await ask('degrade-trial', 'list'); // the trial calls close the circuits
    const msgs = await ask('degrade-after', 'list');
    expect(results(msgs)).toHaveLength(candidates.length);
    expect(statuses(msgs).filter((s) => /local scorer/.test(s))).toEqual([]);
  });
});

describe('every ranker gone', () => {
  it('answers with the retrieved candidates, unranked and said so, not an error', async () => {
    await services();
    for (const b of started.filter((x) => x.service === 'ranker')) await b.drain(500);
    const msgs = await ask('no-rankers', 'list');
    for (const m of msgs) expect(Message.safeParse(m).success).toBe(true);
    expect(msgs.filter((m) => m.message_type === 'error')).toEqual([]);
    expect(msgs.at(-1)).not.toHaveProperty('error');
    const got = results(msgs);
    expect(got.map((r) => r.url)).toEqual(candidates.map((c) => c.url));
    expect(got.every((r) => r.score === 0 && r.description === UNRANKED_NO_RANKER)).toBe(true);
    expect(statuses(msgs)).toContainEqual(
      expect.stringMatching(
        /^No ranker could score the candidates \(no_responders: .*\): these 20 of 20 candidates are unranked/,
      ),
    );
  });
});

describe('a summary whose model fails mid-answer', () => {
  it('keeps the text written so far, closes it, and says where it broke off', async () => {
    const local = new LocalAdapter();
    const llm = new Llm(
      {
        name: 'breaks-off',
        complete: (req) => local.complete(req),
        stream: async function* () {
          yield { delta: 'Western 0 is ' };
          yield { delta: 'the best ' };
          throw Object.assign(new Error('connection reset'), { status: 502 });
        },
      },
      { maxRetries: 0 },
    );
    const req = AskRequest.parse({
      queryId: 'q-mid',
      query: 'westerns',
      site: ['movies'],
      mode: 'summarize',
    });
    const items: ResultItem[] = candidates.slice(0, 3).map((c, i) => ({
      '@type': 'Item',
      url: c.url,
      name: c.name,
      site: c.site,
      siteUrl: c.site,
      score: 90 - i,
      description: 'A western.',
      schema_object: c.schema_object,
    }));
    const out = [];
    for await (const m of postRanking(req, items, { llm, prompts: loadPrompts() })) out.push(m);
    expect(out.filter((m) => m.message_type === 'summary_chunk')).toHaveLength(2);
    expect(out).toContainEqual({
      message_type: 'result',
      '@type': 'Summary',
      content: 'Western 0 is the best',
    });
    expect(out.at(-1)).toMatchObject({
      message_type: 'status',
      content: expect.stringMatching(
        /^The summary breaks off where the model failed \(connection reset\)/,
      ) as string,
    });
  });
});
