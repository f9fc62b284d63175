import { describe, expect, it } from 'vitest';
import { localTaskAnswer } from '@askbus/llm';
import { SubstitutionsAnswer, type SubstitutionsTask } from './task';

const recipe = {
  name: 'Pancakes',
  '@type': 'Recipe',
  schema_object: { '@type': 'Recipe', recipeIngredient: ['2 cups flour', '1 cup milk', '2 eggs'] },
};
const task = (dietary_need: string, unavailable_ingredient: string): SubstitutionsTask => ({
  kind: 'substitutions',
  query: 'q',
  recipe,
  dietary_need,
  unavailable_ingredient,
});

describe('the substitutions task', () => {
  it('replaces the recipe ingredients a dietary need rules out', () => {
    const answer = SubstitutionsAnswer.parse(localTaskAnswer(task('vegan', '')));
    expect(answer.substitutions.map((s) => s.original_ingredient)).toEqual(['1 cup milk', '2 eggs']);
    expect(answer.already_meets_requirements).toBe(false);
  });

  it('replaces an ingredient named, and says when nothing needs replacing', () => {
    const named = SubstitutionsAnswer.parse(localTaskAnswer(task('', 'honey')));
    expect(named.substitutions).toEqual([
      { original_ingredient: 'honey', substitute: 'maple syrup', ratio: '1:1', notes: '' },
    ]);
    const none = SubstitutionsAnswer.parse(localTaskAnswer(task('nut-free', '')));
    expect(none).toMatchObject({ substitutions: [], general_tips: [], already_meets_requirements: true });
  });
});
