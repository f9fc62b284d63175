import { z } from 'zod';
import { contracts, toolContract } from '@askbus/contracts';
import { defineService } from '@askbus/service';
import { startDetailsTool } from './index';

export default defineService({
  name: 'tool-details',
  description:
    "One named item's facts: finds the item the question names and answers with its details (NLWeb's details tool).",
  serves: [toolContract('details')],
  calls: [contracts.search, contracts.names, contracts.items],
  config: z.object({}),
  start: ({ bus }) => ({ llm: startDetailsTool(bus).llm }),
});
