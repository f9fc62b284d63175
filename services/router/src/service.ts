import { EVERY_TOOL, contracts } from '@askbus/contracts';
import { defineService, fromEnv } from '@askbus/service';
import { routerOptionsFromEnv, startRouter } from './index';
import { Gauge } from 'prom-client';
import { routingObserver } from './routing-telemetry';

export default defineService({
  name: 'router',
  description:
    'Answers ask.v1.run: understands the question, scores the tools of config/tools.xml, and runs search or the chosen tool.',
  serves: [contracts.ask],
  // Tool selection may dispatch to any tool a service declares.
  calls: [
    contracts.sites,
    contracts.search,
    contracts.score,
    contracts.profile,
    contracts.names,
    contracts.items,
    EVERY_TOOL,
  ],
  // ASKBUS_RANK_BATCH, ASKBUS_CANDIDATES, ASKBUS_COLLATE_MS, ASKBUS_ROUTER_DEBUG, ASKBUS_FAST_TRACK, …
  config: fromEnv(routerOptionsFromEnv),
  // Queries in flight wait on the rankers and tools, not on this CPU: scale on them.
  deploy: { autoscale: { min: 2, max: 10, inFlightPerPod: 20 } },
  start: ({ bus, config, registry, log }) => {
    const router = startRouter(bus, {
      ...config,
      onRouted: routingObserver(registry),
      // One line per query: at info, so LOG_LEVEL=info (or debug) shows it under askbus up too.
      onAnswered: (q) => log.info({ trace_id: q.traceId, ...q }, 'query answered'),
    });
    // A burst shows here first: calls waiting for their turn at the retriever.
    new Gauge({
      name: 'askbus_router_retriever_queue',
      help: 'Calls to the retriever waiting for admission in this router (ASKBUS_ROUTER_RETRIEVER_CONCURRENCY)',
      registers: [registry],
      collect() {
        this.set(router.admission.queued);
      },
    });
    return { llm: router.model.llm };
  },
});
