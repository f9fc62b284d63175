/**
 * NLWeb's May–Aug 2025 wire format (its servers announced it as api_version 0.1): unnamed
 * `data:` events with the payload at top level — `result_batch` with `results`, `summary`,
 * `intermediate_message` and `ask_user` with `message`, `nlws` with `answer` and `items` — and
 * `{"message_type": "complete"}` last, the event both pages wait for before they close their
 * EventSource (without it the browser reconnects and asks again). Rendered from the router's
 * one Message stream for the two pages that read it:
 *
 * - May 2025 `static/streaming.js`: sets text with textContent; shows item_details' `message`;
 *   keeps intermediate messages; shows a summary only above results.
 * - Aug 2025 `static/fp-chat-interface.js` (it sends `display_mode`): puts summary, ask_user and
 *   nlws text into innerHTML, so that text is HTML-escaped here (a site's data must not run in
 *   the page); an intermediate message vanishes at the next message, so notes (no results,
 *   errors) go out as summary text instead.
 */
import type { Message } from '@askbus/contracts';
import { detailsText, pageEnsemble, toolTextAnswer } from './answers';

export interface LegacyOptions {
  /** Echoed as `query_id` in every event (the pages send their own). */
  queryId: string;
  /** The page puts text into innerHTML (Aug 2025): escape it. */
  html: boolean;
}

type Frame = Record<string, unknown>;

const escapeHtml = (s: string): string =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/** NLWeb 0.1's events for one router message ([] for what these pages neither read nor need). */
export function legacyFrames(m: Message, o: LegacyOptions): Frame[] {
  const text = (s: string): string => (o.html ? escapeHtml(s).replace(/\n/g, '<br>') : s);
  /** A note the page must keep on screen: an intermediate message (May), summary text (Aug). */
  const note = (s: string): Frame =>
    o.html
      ? { message_type: 'summary', message: text(s) }
      : { message_type: 'intermediate_message', message: s };
  const out = ((): Frame[] => {
    switch (m.message_type) {
      case 'begin-nlweb-response':
        return [];
      case 'end-nlweb-response':
        return [{ message_type: 'complete' }];
      case 'result':
        if (typeof m.content === 'string') return [{ message_type: 'summary', message: text(m.content) }];
        return [{ message_type: 'result_batch', results: m.content }];
      case 'nlws':
        return [{ message_type: 'nlws', answer: text(m.answer), items: m.items }];
      case 'intermediate_message':
        return [{ message_type: 'intermediate_message', message: m.content }];
      case 'ask_user':
        return [{ message_type: 'ask_user', message: text(m.content) }];
      case 'site_is_irrelevant_to_query':
        return [o.html ? note(m.content) : { message_type: m.message_type, message: m.content }];
      case 'no_results':
        return [note(m.content)];
      case 'error':
        return [{ message_type: 'error', error: m.error, code: m.code, status: m.status }, note(m.error)];
      case 'item_details': {
        const { message_id: _id, sender_type: _s, timestamp: _t, conversation_id: _c, ...rest } = m;
        return [{ ...rest, message: detailsText(m) }];
      }
      case 'ensemble_result':
        if (o.html) {
          const e = pageEnsemble(m);
          return e ? [e] : [];
        }
        break;
      case 'decontextualized_query':
        return [
          {
            message_type: m.message_type,
            decontextualized_query: text(m.decontextualized_query),
            original_query: text(m.original_query),
          },
        ];
      case 'results_map':
        return [{ message_type: m.message_type, locations: m.locations }];
      default:
        break;
    }
    const answer = toolTextAnswer(m, true);
    return answer ? [{ message_type: 'nlws', answer: text(answer.answer), items: answer.items }] : [];
  })();
  return out.map((f) => (f.message_type === 'complete' ? f : { ...f, query_id: o.queryId }));
}

/**
 * A non-streaming NLWeb 0.1 answer: `query_id`, every result in `results`, and each other
 * message under its own type (the last of a type wins), as NLWeb's servers returned it.
 */
export function legacyBody(messages: readonly Message[], o: LegacyOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { query_id: o.queryId, results: [] };
  const results = body.results as unknown[];
  for (const f of messages.flatMap((m) => legacyFrames(m, o))) {
    const { message_type: type, query_id: _q, ...rest } = f;
    if (type === 'result_batch') results.push(...(rest.results as unknown[]));
    else if (typeof type === 'string' && type !== 'complete') body[type] = rest;
  }
  return body;
}
