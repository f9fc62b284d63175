import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts, type Message, type RetrievedItem } from '@askbus/contracts';
import type { Bus } from '@askbus/bus';
import { testBus, testNats } from '@askbus/bus/testing';
import { Llm, LocalAdapter, loadPrompts } from '@askbus/llm';
import { LatencyAdapter } from '@askbus/llm/testing';
import { startRanker, type RankerHandle } from '@askbus/ranker';
import { startRouter } from './index';
import type { RoutingStats } from './route';

const candidates: RetrievedItem[] = Array.from({ length: 20 }, (_, i) => ({
  url: `https://movies.example/w${i}`,
  name: `Western ${i}`,
  site: 'movies',
  '@type': 'Movie',
  schema_object: { '@type': 'Movie', name: `Western ${i}`, genre: ['Western'] },
  retrievalScore: 100 - i,
}));

/**
 * FastTrack over a real NATS: the raw query's retrieval and ranking start at once; when tool
 * selection (100 ms of model latency here) picks another tool, the ranking calls already at the
 * ranker (300 ms each) are cancelled there, call by call, and their results never sent.
 */
describe('FastTrack and tool dispatch', () => {
  let nats: Awaited<ReturnType<typeof testNats>>;
  const buses: Bus[] = [];
  let caller: Bus;
  let ranker: Bus;
  let handle: RankerHandle;
  let routed: RoutingStats | undefined;

  beforeAll(async () => {
    nats = await testNats();
    const retriever = await testBus(nats.url, 'retriever');
    retriever.serve(contracts.search, async () => ({ items: candidates }));
    ranker = await testBus(nats.url, 'ranker', { heartbeatMs: 100 });
    handle = startRanker(ranker, { delayMs: 300 });
    const router = await testBus(nats.url, 'router');
    const llm = new Llm(
      new LatencyAdapter(new LocalAdapter(), (req) => (req.task?.kind === 'tool_score' ? 100 : 0)),
    );
    startRouter(router, {
      model: { llm, prompts: loadPrompts() },
      search: { rankBatchSize: 5, collateMs: 5 },
      onRouted: (s) => (routed = s),
    });
    caller = await testBus(nats.url, 'gateway');
    buses.push(retriever, ranker, router);
    await Promise.all(buses.map((b) => b.nc.flush()));
  });

  afterAll(async () => {
    await caller?.drain(500);
    for (const b of buses) await b.drain(500);
    await nats?.stop();
  });

  async function ask(queryId: string, query: string): Promise<Message[]> {
    const out: Message[] = [];
    for await (const m of caller.stream(
      contracts.ask,
      { queryId, query, site: ['movies'] },
      { timeoutMs: 10_000 },
    ))
      out.push(m);
    return out;
  }

  it('cancels the FastTrack ranking calls at the ranker when a tool wins, and searches when that tool is down', async () => {
    const before = ranker.stats.cancelled;
    const msgs = await ask('ft-1', 'tell me about Western 3');
    expect(routed).toMatchObject({ tool: 'details', fastTrack: 'aborted', fastTrackAbortReason: 'tool' });
    // 4 FastTrack batches were at the ranker and were cancelled there.
    expect(ranker.stats.cancelled - before).toBe(4);
    // No tool-details service runs here: NLWeb falls back to ranking, so does the router.
    const status = msgs.find((m) => m.message_type === 'status');
    expect(status && 'content' in status ? status.content : '').toMatch(/details tool failed/);
    const results = msgs.flatMap((m) =>
      m.message_type === 'result' && Array.isArray(m.content) ? m.content : [],
    );
    expect(results.length).toBeGreaterThan(0);
    expect(msgs.at(-1)?.message_type).toBe('end-nlweb-response');
  });

  it('keeps the FastTrack results when search wins: no second retrieval or ranking', async () => {
    const requestsBefore = handle.stats.requests;
    const msgs = await ask('ft-2', 'westerns');
    expect(routed).toMatchObject({ tool: 'search', fastTrack: 'used' });
    expect(handle.stats.requests - requestsBefore).toBe(4);
    expect(msgs.filter((m) => m.message_type === 'result').length).toBeGreaterThan(0);
  });
});
