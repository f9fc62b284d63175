import { describe, expect, it } from 'vitest';
import { localTaskAnswer } from '@askbus/llm';
import { CompareAnswer, compareItems, type CompareTask } from './task';

const movie = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  '@type': 'Movie',
  schema_object: { '@type': 'Movie', name, ...extra },
});
const rating = (v: number) => ({ aggregateRating: { ratingValue: v, bestRating: 10 } });

describe('the compare task', () => {
  it('gives the verdict to the better rated item', () => {
    const task: CompareTask = {
      kind: 'compare',
      query: 'compare',
      details_requested: 'everything',
      item1: movie('Alien', rating(8.5)),
      item2: movie('Blade Runner', rating(8.3)),
    };
    const cmp = CompareAnswer.parse(localTaskAnswer(task));
    expect(cmp.verdict).toMatch(/Alien comes out ahead on rating/);
    expect(cmp.comparison).toMatch(/^On rating, Alien has .+ and Blade Runner .+\./);
  });

  it('says neither wins when the items share no measure', () => {
    const cmp = compareItems(movie('Alien'), movie('Blade Runner'), 'mood', []);
    expect(cmp.verdict).toBe(
      'Neither clearly beats the other on mood; it depends on what you want from a movie.',
    );
  });
});
