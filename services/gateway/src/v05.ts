/**
 * NLWeb protocol 0.5 (the TypeSpec spec in nlweb-ai/nlweb-typespec) on the way out: the
 * `{_meta, content}` envelope of Ask and Who answers, Failure bodies, and the renderers of the
 * router's one Message stream into it (SSE events while it runs, or one JSON body).
 */
import { ErrorCode } from '@askbus/contracts';
import type { Message, ResultItem } from '@askbus/contracts';
import type { AskCall } from './dialect';
import { BadRequestError, httpStatusOf } from './errors';
import type { Failure } from './errors';
import { sseFrame } from './render';

/** The protocol version the gateway answers in. */
export const V05_VERSION = '0.5';

export type V05ResponseType = 'Answer' | 'Elicitation' | 'Promise' | 'Failure';

/** `_meta` of a 0.5 response (AskResponseMeta; WhoResponseMeta has no response_type). */
export interface V05Meta {
  response_type?: V05ResponseType;
  version: string;
  conversation_id?: string;
  request_id?: string;
  [extra: string]: unknown;
}

export interface TextContent {
  type: 'text';
  text: string;
}

export interface ResourceContent {
  type: 'resource';
  resource: {
    uri?: string;
    mimeType?: string;
    text?: string;
    data: Record<string, unknown> | Record<string, unknown>[];
  };
}

export type Content = TextContent | ResourceContent;

export interface V05Response {
  _meta: V05Meta;
  content: Content[];
}

/** Error codes of 0.5 failures: the protocol's INVALID_REQUEST and INTERNAL_ERROR, and a few more. */
export type V05ErrorCode = 'INVALID_REQUEST' | 'NOT_FOUND' | 'UNAVAILABLE' | 'TIMEOUT' | 'INTERNAL_ERROR';

export interface V05FailureBody {
  _meta: V05Meta & { response_type: 'Failure' };
  error: { code: V05ErrorCode; message: string; parameter?: string };
}

/** Who a response is for: the ids `_meta` echoes. */
export interface V05Ids {
  conversation_id?: string;
  request_id?: string;
}

/** The 0.5 code of an askbus error code (bus errors and router `error` messages). */
export function v05ErrorCode(code: ErrorCode): V05ErrorCode {
  switch (code) {
    case 'bad_request':
      return 'INVALID_REQUEST';
    case 'not_found':
      return 'NOT_FOUND';
    case 'no_responders':
    case 'unavailable':
      return 'UNAVAILABLE';
    case 'timeout':
    case 'deadline_exceeded':
      return 'TIMEOUT';
    default:
      return 'INTERNAL_ERROR';
  }
}

/** `_meta` with the ids that are set (an empty conversation id is left out). */
export function v05Meta(ids: V05Ids, responseType?: V05ResponseType): V05Meta {
  return {
    ...(responseType ? { response_type: responseType } : {}),
    version: V05_VERSION,
    ...(ids.conversation_id ? { conversation_id: ids.conversation_id } : {}),
    ...(ids.request_id ? { request_id: ids.request_id } : {}),
  };
}

export function v05Failure(
  ids: V05Ids,
  code: V05ErrorCode,
  message: string,
  parameter?: string,
): V05FailureBody {
  return {
    _meta: v05Meta(ids, 'Failure') as V05Meta & { response_type: 'Failure' },
    error: { code, message, ...(parameter !== undefined ? { parameter } : {}) },
  };
}

/** A bad 0.5 request: a 400 whose body is the protocol's Failure naming the field at fault. */
export class V05BadRequestError extends BadRequestError {
  constructor(
    parameter: string,
    message: string,
    readonly ids: V05Ids = {},
  ) {
    super(parameter, message);
    this.name = 'V05BadRequestError';
  }
  override responseBody(): V05FailureBody {
    return v05Failure(this.ids, 'INVALID_REQUEST', this.message, this.parameter);
  }
}

/** The ids a 0.5 answer echoes: the conversation, and the client's request id or the query id. */
export function callIds(call: AskCall): V05Ids {
  return {
    conversation_id: call.request.conversationId,
    request_id: call.requestId ?? call.request.queryId,
  };
}

const typesOf = (v: unknown): string[] =>
  (Array.isArray(v) ? v : [v]).filter((t): t is string => typeof t === 'string').map((t) => t.toLowerCase());

/**
 * The `type` filter as a predicate on result items (case-insensitive on the schema.org @type).
 * Items without a type pass: the gateway cannot tell.
 */
export function typeFilter(call: AskCall): (item: ResultItem) => boolean {
  const wanted = new Set(typesOf(call.request.filters?.type));
  if (wanted.size === 0) return () => true;
  return (item) => {
    const have = typesOf(item.schema_object['@type']);
    return have.length === 0 || have.some((t) => wanted.has(t));
  };
}

/**
 * A ranked item as a resource: `data` is its schema.org object (kept whole), with the item's url
 * and name when the object lacks them, plus the ranking: `score`, `site` and the ranker's
 * `relevance` text. `uri` is the item's url.
 */
export function itemResource(item: ResultItem): ResourceContent {
  const schema = item.schema_object;
  return {
    type: 'resource',
    resource: {
      uri: item.url,
      data: {
        ...schema,
        '@type': schema['@type'] ?? 'Thing',
        url: schema.url ?? item.url,
        name: schema.name ?? item.name,
        score: item.score,
        site: item.site,
        relevance: item.description,
      },
    },
  };
}

const text = (t: string): TextContent => ({ type: 'text', text: t });

const ENVELOPE = new Set(['message_id', 'sender_type', 'timestamp', 'conversation_id']);

/** A tool's answer (details, comparison, ensemble, map) as a resource: its payload, typed by message_type. */
function toolResource(m: Message): ResourceContent {
  const data: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m)) if (!ENVELOPE.has(k)) data[k] = v;
  return { type: 'resource', resource: { data } };
}

/** What one router message adds to a 0.5 answer. */
interface Step {
  content: Content[];
  elicitation?: string;
  failure?: Failure;
}

/**
 * The state of one 0.5 answer: which items were sent, whether a text item was, what to say when
 * the router sent no summary. Shared by the streaming and the collecting renderer.
 */
class Answer {
  private readonly seen = new Set<string>();
  private readonly names: string[] = [];
  results = 0;
  texts = 0;
  private readonly keep: (item: ResultItem) => boolean;

  constructor(readonly call: AskCall) {
    this.keep = typeFilter(call);
  }

  private resources(items: readonly ResultItem[]): Content[] {
    const out: Content[] = [];
    for (const item of items) {
      if (this.seen.has(item.url) || !this.keep(item)) continue;
      this.seen.add(item.url);
      this.names.push(item.name);
      out.push(itemResource(item));
    }
    this.results += out.length;
    return out;
  }

  private text(t: string): Content[] {
    if (t.trim() === '') return [];
    this.texts++;
    return [text(t)];
  }

  step(m: Message): Step {
    switch (m.message_type) {
      case 'result':
        if (Array.isArray(m.content)) return { content: this.resources(m.content) };
        return { content: this.text(m.content) };
      case 'nlws':
        return { content: [...this.text(m.answer), ...this.resources(m.items)] };
      case 'no_results':
      case 'site_is_irrelevant_to_query':
        return { content: this.text(m.content) };
      case 'ask_user':
        return { content: this.text(m.content), elicitation: m.content };
      case 'error': {
        const known = ErrorCode.safeParse(m.code);
        const code: ErrorCode = known.success ? known.data : 'internal';
        const status = typeof m.status === 'number' && m.status >= 400 ? m.status : httpStatusOf(code);
        return { content: [], failure: { code, status, error: m.error } };
      }
      case 'item_details':
      case 'compare_items':
      case 'ensemble_result':
      case 'substitution_suggestions':
      case 'results_map':
        return { content: [toolResource(m)] };
      default:
        // Progress (intermediate_message, status, chunks, decontextualized_query, …) has no place in 0.5.
        return { content: [] };
    }
  }

  /** The text item of an answer the router gave no words for, composed from its results. */
  composed(): TextContent {
    this.texts++;
    const q = this.call.request.query;
    if (this.results === 0) return text(`No results were found for "${q}".`);
    const shown = this.names.slice(0, 3).join('; ');
    const more = this.names.length > 3 ? ` and ${this.names.length - 3} more` : '';
    const n = `${this.results} result${this.results === 1 ? '' : 's'}`;
    return text(`Found ${n} for "${q}": ${shown}${more}.`);
  }
}

function failureBody(ids: V05Ids, f: Failure): V05FailureBody {
  return v05Failure(ids, v05ErrorCode(f.code), f.error);
}

/**
 * Renders a streamed 0.5 answer: a `{_meta}` event when the router begins, then
 * `{content: [...]}` events as results pass the ranker (the first result is not held back), a
 * new `{_meta}` with response_type Elicitation before the router's question, a text item
 * composed from the results at the end when the router sent none, and Failure events.
 */
export class V05Stream {
  private readonly answer: Answer;
  private readonly ids: V05Ids;
  private began = false;
  private done = false;

  constructor(call: AskCall) {
    this.answer = new Answer(call);
    this.ids = callIds(call);
  }

  render(m: Message): string {
    if (this.done) return '';
    let out = this.begin();
    if (m.message_type === 'begin-nlweb-response') return out;
    if (m.message_type === 'end-nlweb-response') return out + this.finish();
    const step = this.answer.step(m);
    if (step.failure) return out + this.fail(step.failure);
    if (step.elicitation !== undefined) out += sseFrame({ _meta: v05Meta(this.ids, 'Elicitation') });
    if (step.content.length) out += sseFrame({ content: step.content });
    return out;
  }

  /** Ends the answer: a composed text item when it has none yet. */
  finish(): string {
    if (this.done) return '';
    const out =
      this.begin() + (this.answer.texts === 0 ? sseFrame({ content: [this.answer.composed()] }) : '');
    this.done = true;
    return out;
  }

  /** A Failure event; nothing follows it. */
  fail(f: Failure): string {
    if (this.done) return '';
    this.began = true;
    this.done = true;
    return sseFrame(failureBody(this.ids, f));
  }

  private begin(): string {
    if (this.began) return '';
    this.began = true;
    return sseFrame({ _meta: v05Meta(this.ids, 'Answer') });
  }
}

/** Collects a whole 0.5 answer for a non-streaming response. */
export class V05Collector {
  private readonly answer: Answer;
  private readonly ids: V05Ids;
  private readonly content: Content[] = [];
  private readonly texts: Content[] = [];
  private elicitation?: string;
  private failure?: Failure;

  constructor(call: AskCall) {
    this.answer = new Answer(call);
    this.ids = callIds(call);
  }

  add(m: Message): void {
    if (this.failure) return;
    const step = this.answer.step(m);
    if (step.failure) this.failure = step.failure;
    if (step.elicitation !== undefined && this.elicitation === undefined) this.elicitation = step.elicitation;
    for (const c of step.content) (c.type === 'text' ? this.texts : this.content).push(c);
  }

  /** The HTTP status and body: an Answer or Elicitation (text items first), or a Failure. */
  result(failure?: Failure): { status: number; body: V05Response | V05FailureBody } {
    const f = failure ?? this.failure;
    if (f) return { status: f.status, body: failureBody(this.ids, f) };
    if (this.elicitation !== undefined) {
      const question = text(this.elicitation);
      const others = this.texts.filter((t) => t.type !== 'text' || t.text !== this.elicitation);
      return {
        status: 200,
        body: { _meta: v05Meta(this.ids, 'Elicitation'), content: [question, ...others, ...this.content] },
      };
    }
    const texts = this.texts.length ? this.texts : [this.answer.composed()];
    return {
      status: 200,
      body: { _meta: v05Meta(this.ids, 'Answer'), content: [...texts, ...this.content] },
    };
  }
}

/** A failure as a 0.5 body (for failures outside an answer, e.g. before it began). */
export function v05FailureOf(call: AskCall, f: Failure): V05FailureBody {
  return failureBody(callIds(call), f);
}
