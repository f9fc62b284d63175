import { describe, expect, it } from 'vitest';
import { isRoutingTask, Llm, LocalAdapter } from '@askbus/llm';
import { LatencyAdapter } from '@askbus/llm/testing';
import { loadTools, toolsFor } from '@askbus/tools';
import { selectTools } from './tool-selection';

const movieTools = toolsFor(loadTools(), 'movies', 'Movie');
/** The local model behind a latency per tool: `fast` answers in 5 ms, every other tool in 300 ms. */
function slowModel(fast: string) {
  const adapter = new LatencyAdapter(new LocalAdapter(), (req) =>
    req.task && isRoutingTask(req.task) && req.task.kind === 'tool_score' && req.task.tool.name === fast
      ? 5
      : 300,
  );
  return { adapter, llm: new Llm(adapter) };
}

describe('tool selection', () => {
  it('stops at the first score ≥ 90 and cancels the calls still in flight', async () => {
    const { adapter, llm } = slowModel('details');
    const t0 = Date.now();
    const { ranked, stats } = await selectTools(
      llm,
      movieTools,
      'tell me about Pale Rider',
      'Movie',
      new AbortController().signal,
    );
    expect(Date.now() - t0).toBeLessThan(200);
    expect(ranked[0]?.tool.name).toBe('details');
    expect(ranked[0]?.params).toMatchObject({ item_name: 'Pale Rider' });
    expect(stats).toMatchObject({ calls: 4, completed: 1, saved: 3 });
    await new Promise((r) => setTimeout(r, 10));
    expect(adapter.cancelled).toBe(3);
  });

  it('without early termination waits for every call', async () => {
    const { adapter, llm } = slowModel('details');
    const { ranked, stats } = await selectTools(
      llm,
      movieTools,
      'tell me about Pale Rider',
      'Movie',
      new AbortController().signal,
      {
        earlyStop: null,
        minScore: 70,
        keep: 3,
      },
    );
    expect(ranked.map((r) => r.tool.name)).toEqual(['details']);
    expect(stats).toMatchObject({ calls: 4, completed: 4, saved: 0 });
    expect(stats.elapsedMs).toBeGreaterThanOrEqual(290);
    expect(adapter.cancelled).toBe(0);
  });

  it('drops tools under 70 and falls back to search', async () => {
    const llm = new Llm(new LocalAdapter());
    const noSearch = movieTools.filter((t) => t.name !== 'search');
    const { ranked } = await selectTools(
      llm,
      noSearch,
      'westerns with clint eastwood',
      'Movie',
      new AbortController().signal,
    );
    expect(ranked).toHaveLength(1);
    expect(ranked[0]).toMatchObject({ score: 0, params: { search_query: 'westerns with clint eastwood' } });
    expect(ranked[0]?.tool.name).toBe('search');
  });

  it('one tool skips scoring', async () => {
    const { adapter, llm } = slowModel('none');
    const { ranked, stats } = await selectTools(
      llm,
      movieTools.slice(0, 1),
      'anything',
      'Movie',
      new AbortController().signal,
    );
    expect(ranked[0]).toMatchObject({ score: 100 });
    expect(stats).toMatchObject({ calls: 0, skipped: 'single_tool' });
    expect(adapter.started).toBe(0);
  });

  it('a model that fails for every tool: the local tool scorer chooses instead', async () => {
    const llm = new Llm(
      {
        name: 'broken',
        complete: () => Promise.reject(new Error('boom')),
        // eslint-disable-next-line require-yield
        stream: async function* () {
          throw new Error('boom');
        },
      },
      { maxRetries: 0 },
    );
    const { ranked, stats } = await selectTools(
      llm,
      movieTools,
      'tell me about Alien',
      'Movie',
      new AbortController().signal,
    );
    // As the local provider would have chosen: details, with the item named.
    expect(ranked[0]?.tool.name).toBe('details');
    expect(ranked[0]?.params).toMatchObject({ item_name: 'Alien' });
    expect(stats.failed).toBe(0);
    expect(stats.scoredLocally).toBeGreaterThanOrEqual(1);
    expect(stats.fallbackReasons).toEqual({ unavailable: stats.scoredLocally });
    // Every call fell back (counted for the metrics), though the selection stopped at the first ≥ 90.
    expect(llm.fallbackCounts()).toEqual([{ task: 'tool_score', reason: 'unavailable', count: 4 }]);
  });
});
