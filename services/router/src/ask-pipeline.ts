import { createMessageFactory, type AskRequest, type Message } from '@askbus/contracts';
import { postRanking, type AnswerModel } from './post-ranking';
import { routeAsk, type RoutingDeps } from './route';
import {
  defaultSearchSettings,
  runSearch,
  type SearchFindings,
  type SearchPorts,
  type SearchSettings,
  type SearchStats,
} from './search-pipeline';

/** Error codes for messages, from a thrown value (BusError-like objects carry their own). */
function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'internal';
}

/**
 * One query from begin-nlweb-response to end-nlweb-response. With `routing`, the prepare steps,
 * tool selection and FastTrack run first (see routeAsk); without it every query takes the search path.
 */
export async function* runAsk(
  req: AskRequest,
  ports: SearchPorts,
  signal: AbortSignal,
  settings: SearchSettings = defaultSearchSettings,
  stats?: SearchStats,
  model?: AnswerModel,
  routing?: RoutingDeps,
): AsyncGenerator<Message, void, undefined> {
  const stamp = createMessageFactory(req.conversationId, req.queryId);
  yield stamp({ message_type: 'begin-nlweb-response', query: req.query });
  try {
    if (routing) {
      for await (const body of routeAsk(req, ports, signal, settings, stats, model, routing))
        yield stamp(body);
      yield stamp({ message_type: 'end-nlweb-response' });
      return;
    }
    const findings: SearchFindings = {};
    const search = runSearch(req, ports, signal, settings, stats, findings);
    let step = await search.next();
    while (!step.done) {
      yield stamp(step.value);
      step = await search.next();
    }
    for await (const body of postRanking(req, step.value, model, signal, settings.rankDeadline, findings))
      yield stamp(body);
  } catch (err) {
    if (signal.aborted) throw err;
    yield stamp({
      message_type: 'error',
      error: err instanceof Error ? err.message : String(err),
      code: codeOf(err),
    });
    yield stamp({ message_type: 'end-nlweb-response', error: true });
    return;
  }
  yield stamp({ message_type: 'end-nlweb-response' });
}
