/**
 * The one fold of the router's Message stream into an answer: the results (each item once, at
 * most `maxResults`), the summary, the generated answer, the router's question, its notes and
 * errors, the tools' answers. Every surface reads the stream through it: the REST renderers
 * (the messages in order, the protocol 0.5 steps), MCP's tools and A2A's skills. Each `add`
 * says what the message changed, so that a surface can report it as it happens.
 */
import { z } from 'zod';
import { ErrorCode, ResultItem } from '@askbus/contracts';
import type { AskRequest, Message } from '@askbus/contracts';
import { httpStatusOf } from '../errors';
import type { Failure } from '../errors';

/** The answer to one AskRequest, as MCP's `ask` tool returns it and A2A's `ask` skill renders it. */
export const Answer = z.object({
  query_id: z.string(),
  query: z.string(),
  site: z.array(z.string()),
  mode: z.string(),
  results: z.array(ResultItem),
  summary: z.string().optional(),
  answer: z.string().optional(),
  /** The router needs more from the user before it can answer. */
  ask_user: z.string().optional(),
  /** Progress texts the router sent along the way. */
  notes: z.array(z.string()),
  errors: z.array(z.string()),
});
export type Answer = z.infer<typeof Answer>;

/** The answer to `request` before any message of the router has arrived. */
export function emptyAnswer(request: AskRequest): Answer {
  return {
    query_id: request.queryId,
    query: request.query,
    site: request.site,
    mode: request.mode,
    results: [],
    notes: [],
    errors: [],
  };
}

type TextType = 'intermediate_message' | 'status' | 'no_results' | 'site_is_irrelevant_to_query';

/** What one message changed in the answer. */
export type Step =
  | { kind: 'bracket'; type: 'begin-nlweb-response' | 'end-nlweb-response' }
  /** Result items; `fresh` are those not seen before (and kept). */
  | { kind: 'results'; fresh: ResultItem[] }
  | { kind: 'summary'; text: string }
  /** A generated answer (nlws) and its items. */
  | { kind: 'answer'; text: string; fresh: ResultItem[] }
  | { kind: 'ask_user'; text: string }
  /** Progress and the router's words that are no answer (no results, an irrelevant site). */
  | { kind: 'note'; type: TextType; text: string }
  /** The router's error message, as a failure of the answer. */
  | { kind: 'error'; failure: Failure }
  | { kind: 'decontextualized'; query: string }
  /** A tool's answer (item_details, compare_items, ensemble_result, …). */
  | { kind: 'tool'; message: Message }
  | { kind: 'other'; message: Message };

const TOOL_TYPES = new Set<string>([
  'item_details',
  'compare_items',
  'ensemble_result',
  'substitution_suggestions',
  'results_map',
]);

export interface FoldOptions {
  /** At most this many results are kept (default: the request's maxResults; Infinity: all). */
  maxResults?: number;
  /** Only the items this keeps are results (the 0.5 `type` filter). */
  keep?: (item: ResultItem) => boolean;
}

/** The answer to one request as its messages arrive. */
export class AnswerFold {
  readonly answer: Answer;
  /** Every message, in the order it came. */
  readonly messages: Message[] = [];
  private readonly seen = new Set<string>();
  private readonly max: number;
  private readonly keep: (item: ResultItem) => boolean;

  constructor(request: AskRequest, opts: FoldOptions = {}) {
    this.answer = emptyAnswer(request);
    this.max = opts.maxResults ?? request.maxResults;
    this.keep = opts.keep ?? (() => true);
  }

  /** Starts the answer again for the next request of the same conversation (an elicited answer). */
  restart(request: AskRequest): void {
    this.answer.query_id = request.queryId;
    this.answer.query = request.query;
    delete this.answer.ask_user;
  }

  add(m: Message): Step {
    this.messages.push(m);
    const a = this.answer;
    switch (m.message_type) {
      case 'begin-nlweb-response':
      case 'end-nlweb-response':
        return { kind: 'bracket', type: m.message_type };
      case 'result':
        if (typeof m.content === 'string') {
          a.summary = m.content;
          return { kind: 'summary', text: m.content };
        }
        return { kind: 'results', fresh: this.fresh(m.content) };
      case 'nlws':
        a.answer = m.answer;
        return { kind: 'answer', text: m.answer, fresh: this.fresh(m.items) };
      case 'ask_user':
        a.ask_user = m.content;
        return { kind: 'ask_user', text: m.content };
      case 'intermediate_message':
      case 'status':
      case 'no_results':
      case 'site_is_irrelevant_to_query':
        a.notes.push(m.content);
        return { kind: 'note', type: m.message_type, text: m.content };
      case 'error': {
        a.errors.push(m.error);
        const known = ErrorCode.safeParse(m.code);
        const code: ErrorCode = known.success ? known.data : 'internal';
        const status = typeof m.status === 'number' && m.status >= 400 ? m.status : httpStatusOf(code);
        return { kind: 'error', failure: { code, status, error: m.error } };
      }
      case 'decontextualized_query':
        return { kind: 'decontextualized', query: m.decontextualized_query };
      default:
        return TOOL_TYPES.has(m.message_type) ? { kind: 'tool', message: m } : { kind: 'other', message: m };
    }
  }

  /** The items not seen before that are kept, while there is room; they join the results. */
  private fresh(items: readonly ResultItem[]): ResultItem[] {
    const out: ResultItem[] = [];
    for (const item of items) {
      if (this.seen.has(item.url) || this.answer.results.length >= this.max || !this.keep(item)) continue;
      this.seen.add(item.url);
      this.answer.results.push(item);
      out.push(item);
    }
    return out;
  }
}
