import { describe, expect, it } from 'vitest';
import { Llm, LocalAdapter, localTaskAnswer, OpenAiCompatibleAdapter, type LlmAdapter } from '@askbus/llm';
import { startFakeLlm } from '@askbus/llm/testing';
import { ask } from './kit';
import { ItemMatchAnswer, itemMatchTask, matchItem } from './tasks';

const movie = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  '@type': 'Movie',
  schema_object: { '@type': 'Movie', name, ...extra },
});

describe('the item_match task', () => {
  it('scores the item a name names above 75, another one below', () => {
    const exact = ItemMatchAnswer.parse(
      localTaskAnswer({ kind: 'item_match', name: 'Alien', item: movie('Alien') }),
    );
    const other = ItemMatchAnswer.parse(
      localTaskAnswer({ kind: 'item_match', name: 'Alien', item: movie('Aliens') }),
    );
    expect(exact.score).toBeGreaterThan(75);
    expect(other.score).toBeLessThanOrEqual(75);
    expect(matchItem('Blade Runner', movie('Blade Runner 2049')).score).toBe(83);
    expect(matchItem('the', movie('Alien'))).toEqual({ score: 0, explanation: 'no name to match' });
  });

  it('is answered by the local provider, the fake model server, and locally when the model fails', async () => {
    const task = { kind: 'item_match' as const, name: 'Alien', item: movie('Alien') };
    const signal = new AbortController().signal;
    const local = await ask(new Llm(new LocalAdapter()), itemMatchTask, task, 'Is this "Alien"?', signal);
    expect(local).toEqual({ score: 96, explanation: '"Alien" is the item named' });
    const fake = await startFakeLlm();
    try {
      const remote = new Llm(
        new OpenAiCompatibleAdapter({ baseURL: fake.baseURL, apiKey: 'x', models: { low: 'm', high: 'm' } }),
      );
      expect(await ask(remote, itemMatchTask, task, 'Is this "Alien"?', signal)).toEqual(local);
      expect(fake.byKind.item_match).toBe(1);
    } finally {
      await fake.close();
    }
    // a model that answers something else: the local answer stands in
    const garbage: LlmAdapter = {
      name: 'garbage',
      complete: () => Promise.resolve({ text: 'not json' }),
      stream: async function* () {
        yield { delta: 'not json' };
      },
    };
    const llm = new Llm(garbage);
    expect(await ask(llm, itemMatchTask, task, 'Is this "Alien"?', signal)).toEqual(local);
    expect(llm.counters.malformedOutputs).toBeGreaterThan(0);
  });
});
