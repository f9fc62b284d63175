import { z } from 'zod';
import { contracts, toolContract } from '@askbus/contracts';
import { defineService } from '@askbus/service';
import { startEnsembleTool } from './index';

export default defineService({
  name: 'tool-ensemble',
  description:
    'A set of items that go together (a meal, an outfit, a trip), one per part the question names.',
  serves: [toolContract('ensemble')],
  calls: [contracts.search, contracts.score],
  config: z.object({}),
  start: ({ bus }) => ({ llm: startEnsembleTool(bus).llm }),
});
