import { describe, expect, it } from 'vitest';
import { localTaskAnswer } from '@askbus/llm';
import { EnsembleAnswer, type EnsembleTask } from './task';

const movie = (name: string) => ({
  name,
  url: `https://movies.example/${name}`,
  '@type': 'Movie',
  schema_object: { '@type': 'Movie', name },
});

describe('the ensemble task', () => {
  it('picks the top item of each part and names them in the theme', () => {
    const task: EnsembleTask = {
      kind: 'ensemble',
      query: 'a comedy and a horror film',
      ensemble_type: 'movie_night',
      groups: [
        { query: 'comedy', items: [movie('Airplane!'), movie('Spaceballs')] },
        { query: 'horror film', items: [movie('Alien')] },
        { query: 'musical', items: [] },
      ],
    };
    const answer = EnsembleAnswer.parse(localTaskAnswer(task));
    expect(answer.theme).toBe('movie night: Airplane! + Alien');
    expect(answer.items.map((i) => [i.category, i.name, i.url])).toEqual([
      ['comedy', 'Airplane!', 'https://movies.example/Airplane!'],
      ['horror film', 'Alien', 'https://movies.example/Alien'],
    ]);
    expect(answer.overall_tips).toEqual(['Start with the lighter film and end with the more intense one.']);
  });
});
