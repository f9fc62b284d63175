import { z } from 'zod';
import { contracts, toolContract } from '@askbus/contracts';
import { defineService } from '@askbus/service';
import { startRecipeTool } from './index';

export default defineService({
  name: 'tool-recipe',
  description: 'Recipe answers: substitutions for an ingredient, and dishes that go with one.',
  serves: [toolContract('recipe_substitutions'), toolContract('accompaniment')],
  calls: [contracts.search, contracts.score],
  config: z.object({}),
  start: ({ bus }) => ({ llm: startRecipeTool(bus).llm }),
});
