/**
 * What the router decided, made visible: metrics of the tool chosen, the tool-scoring calls made
 * and cancelled by early termination, FastTrack used or cancelled (and why); the same as span
 * attributes and an event on the query's span; and one log line per answered query.
 */
import { trace } from '@opentelemetry/api';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Message } from '@askbus/contracts';
import type { RoutingStats } from './route';

/** One answered query, for the request log. */
export interface QuerySummary {
  queryId: string;
  traceId: string;
  site: string[];
  tool: string;
  results: number;
  ms: number;
  outcome: 'ok' | 'error' | 'cancelled';
}

const metric = <T>(registry: Registry, name: string, make: () => T): T =>
  (registry.getSingleMetric(name) as T | undefined) ?? make();

/** The onRouted hook of startRouter: metrics and span attributes of one routing decision. */
export function routingObserver(registry: Registry): (stats: RoutingStats) => void {
  const chosen = metric(
    registry,
    'askbus_router_tool_chosen_total',
    () =>
      new Counter({
        name: 'askbus_router_tool_chosen_total',
        help: 'Queries routed, by the tool chosen',
        labelNames: ['tool'],
        registers: [registry],
      }),
  );
  const scoring = metric(
    registry,
    'askbus_router_tool_scoring_calls_total',
    () =>
      new Counter({
        name: 'askbus_router_tool_scoring_calls_total',
        help: 'Tool-scoring calls of tool selection: completed, cancelled by early termination, or failed',
        labelNames: ['outcome'],
        registers: [registry],
      }),
  );
  const fastTrack = metric(
    registry,
    'askbus_router_fast_track_total',
    () =>
      new Counter({
        name: 'askbus_router_fast_track_total',
        help: 'FastTrack per query: used (its results answered), aborted (and why: a tool won, the query was rewritten, …) or ineligible',
        labelNames: ['outcome', 'reason'],
        registers: [registry],
      }),
  );
  const selection = metric(
    registry,
    'askbus_router_tool_selection_seconds',
    () =>
      new Histogram({
        name: 'askbus_router_tool_selection_seconds',
        help: 'Time tool selection took (early termination shortens it)',
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers: [registry],
      }),
  );
  return (stats) => {
    const s = stats.selection;
    chosen.inc({ tool: stats.tool });
    scoring.inc({ outcome: 'completed' }, s.completed);
    scoring.inc({ outcome: 'cancelled' }, s.saved);
    scoring.inc({ outcome: 'failed' }, s.failed);
    fastTrack.inc({ outcome: stats.fastTrack, reason: stats.fastTrackAbortReason ?? '' });
    selection.observe(s.elapsedMs / 1000);
    const attributes = {
      'askbus.tool': stats.tool,
      'askbus.tool.score': stats.score,
      'askbus.tool_selection.calls': s.calls,
      'askbus.tool_selection.completed': s.completed,
      'askbus.tool_selection.cancelled': s.saved,
      'askbus.tool_selection.failed': s.failed,
      'askbus.tool_selection.ms': s.elapsedMs,
      'askbus.fast_track': stats.fastTrack,
      ...(stats.fastTrackAbortReason ? { 'askbus.fast_track.abort_reason': stats.fastTrackAbortReason } : {}),
      ...(stats.toolFailed ? { 'askbus.tool.failed': stats.toolFailed } : {}),
    };
    const span = trace.getActiveSpan();
    span?.setAttributes(attributes);
    span?.addEvent('tool selected', attributes);
  };
}

/** Result items a message carries (result lists and NLWeb's generated answers). */
export function resultsIn(m: Message): number {
  if (m.message_type === 'result' && Array.isArray(m.content)) return m.content.length;
  if (m.message_type === 'nlws') return m.items.length;
  return 0;
}
