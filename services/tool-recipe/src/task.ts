import type { z } from 'zod';
import { SubstitutionsAnswer } from '@askbus/contracts';
import { defineTask, type ItemShown } from '@askbus/llm';

/** The recipe tool's model task: substitutions that make a recipe fit a dietary need or do without an ingredient. */
export type SubstitutionsTask = {
  kind: 'substitutions';
  query: string;
  recipe: ItemShown;
  dietary_need: string;
  unavailable_ingredient: string;
};

export { SubstitutionsAnswer };

export const substitutionsTask = defineTask({
  kind: 'substitutions',
  schema: SubstitutionsAnswer,
  local: substitutions,
});

/** Common substitutions, by the ingredient replaced (and the dietary needs each one serves). */
const SUBSTITUTES: { match: RegExp; substitute: string; ratio: string; notes: string; serves: string[] }[] = [
  {
    match: /\bbutter\b/,
    substitute: 'olive oil or vegan butter',
    ratio: '3/4 cup oil per 1 cup butter',
    notes: 'oil makes baked goods denser',
    serves: ['vegan', 'dairy-free'],
  },
  {
    match: /\bmilk\b/,
    substitute: 'oat or soy milk',
    ratio: '1:1',
    notes: 'unsweetened keeps savoury dishes right',
    serves: ['vegan', 'dairy-free'],
  },
  {
    match: /\b(cream|heavy cream)\b/,
    substitute: 'coconut cream',
    ratio: '1:1',
    notes: 'adds a light coconut taste',
    serves: ['vegan', 'dairy-free'],
  },
  {
    match: /\b(cheese|parmesan|cheddar|mozzarella)\b/,
    substitute: 'nutritional yeast or vegan cheese',
    ratio: '1/4 cup yeast per 1/2 cup grated cheese',
    notes: 'for flavour rather than melt',
    serves: ['vegan', 'dairy-free'],
  },
  {
    match: /\beggs?\b/,
    substitute: 'flax egg (1 tbsp ground flax + 3 tbsp water)',
    ratio: '1 flax egg per egg',
    notes: 'let it rest 5 minutes to thicken',
    serves: ['vegan', 'egg-free'],
  },
  {
    match: /\b(flour|all-purpose flour|wheat flour)\b/,
    substitute: 'gluten-free flour blend',
    ratio: '1:1',
    notes: 'add 1/4 tsp xanthan gum per cup if the blend has none',
    serves: ['gluten-free'],
  },
  {
    match: /\b(sugar)\b/,
    substitute: 'maple syrup',
    ratio: '3/4 cup per 1 cup sugar, less 3 tbsp liquid',
    notes: 'browns faster',
    serves: [],
  },
  {
    match: /\b(beef|chicken|pork|bacon|sausage)\b/,
    substitute: 'mushrooms or firm tofu',
    ratio: '1:1 by weight',
    notes: 'season generously',
    serves: ['vegan', 'vegetarian'],
  },
  { match: /\b(honey)\b/, substitute: 'maple syrup', ratio: '1:1', notes: '', serves: ['vegan'] },
  {
    match: /\b(nuts?|almonds?|walnuts?|pecans?)\b/,
    substitute: 'toasted seeds (sunflower, pumpkin)',
    ratio: '1:1',
    notes: '',
    serves: ['nut-free'],
  },
];

export function substitutions(task: SubstitutionsTask): z.input<typeof SubstitutionsAnswer> {
  const ingredients = ((): string[] => {
    const v = task.recipe.schema_object.recipeIngredient;
    return Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : [];
  })();
  const need = task.dietary_need.toLowerCase().replace(/\s+/g, '-');
  const wanted = task.unavailable_ingredient.toLowerCase();
  const out: { original_ingredient: string; substitute: string; ratio: string; notes: string }[] = [];
  for (const s of SUBSTITUTES) {
    const fromRecipe = ingredients.find((i) => s.match.test(i.toLowerCase()));
    const byName = wanted !== '' && s.match.test(wanted);
    const byNeed = need !== '' && s.serves.includes(need) && fromRecipe !== undefined;
    if (byName || byNeed) {
      out.push({
        original_ingredient: fromRecipe ?? wanted,
        substitute: s.substitute,
        ratio: s.ratio,
        notes: s.notes,
      });
    }
  }
  return {
    substitutions: out,
    general_tips: out.length ? ['Change one ingredient at a time and taste as you go.'] : [],
    already_meets_requirements: out.length === 0 && wanted === '',
  };
}
