/**
 * NLWeb protocol 0.5 (the TypeSpec spec in nlweb-ai/nlweb-typespec) on the way out: the
 * `{_meta, content}` envelope of Ask and Who answers, Failure bodies, and the renderers of the
 * router's one Message stream into it (SSE events while it runs, or one JSON body).
 */
import type { ErrorCode, Message, ResultItem } from '@askbus/contracts';
import { AnswerFold } from './ask/fold';
import type { AskCall } from './dialect';
import { BadRequestError } from './errors';
import type { Failure } from './errors';
import { sseFrame } from './render';
import { toolContent } from './v05-tools';
import type { ResourceContent } from './v05-tools';

/** The protocol version the gateway answers in. */
export const V05_VERSION = '0.5';

/** The spec's response types (AskResponseMeta.response_type): a failure is none of them. */
export type V05ResponseType = 'Answer' | 'Elicitation' | 'Promise';

/**
 * A failure as askbus reports it inside `_meta` (the spec's extension point: AskResponseMeta
 * and WhoResponseMeta allow "any additional protocol-specific fields").
 */
export interface V05Error {
  code: V05ErrorCode;
  message: string;
  /** The request field at fault, for a bad request. */
  parameter?: string;
}

/** `_meta` of a 0.5 response (AskResponseMeta; WhoResponseMeta has no response_type). */
export interface V05Meta {
  response_type?: V05ResponseType;
  version: string;
  conversation_id?: string;
  request_id?: string;
  error?: V05Error;
  [extra: string]: unknown;
}

export interface TextContent {
  type: 'text';
  text: string;
}

export type { ResourceContent };

export type Content = TextContent | ResourceContent;

export interface V05Response {
  _meta: V05Meta;
  content: Content[];
}

/**
 * Error codes of 0.5 failures: INVALID_REQUEST and INTERNAL_ERROR (NLWeb's ask agent uses
 * them), and a few more.
 */
export type V05ErrorCode =
  | 'INVALID_REQUEST'
  | 'NOT_FOUND'
  | 'UNAVAILABLE'
  | 'TIMEOUT'
  | 'INTERNAL_ERROR'
  | 'UNAUTHORIZED'
  | 'RATE_LIMITED';

/**
 * A failure in protocol 0.5. The spec has no failure type: every answer is an AskResponse (or
 * WhoResponse) whose `content` holds at least one text item, and `_meta.response_type` is one of
 * Answer, Elicitation, Promise or absent. So a failure is a response with no response_type, the
 * error in `_meta.error` (as NLWeb_Core, the reference server, puts its errors in `_meta`) and
 * its message as the text item; the HTTP status says it failed (a streamed failure: 200, then
 * this event).
 */
export interface V05FailureBody {
  _meta: V05Meta & { error: V05Error };
  content: [TextContent];
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
  const error: V05Error = { code, message, ...(parameter !== undefined ? { parameter } : {}) };
  return { _meta: { ...v05Meta(ids), error }, content: [{ type: 'text', text: message }] };
}

/** Whether a body is a 0.5 failure (askbus's form: `_meta.error` and the text item). */
export function isV05Failure(body: unknown): body is V05FailureBody {
  if (typeof body !== 'object' || body === null) return false;
  const meta = (body as { _meta?: unknown })._meta;
  if (typeof meta !== 'object' || meta === null) return false;
  const error = (meta as { error?: unknown }).error;
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  );
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

/** The first URL of a schema.org `image` (a URL, an ImageObject, or a list of them). */
function imageUrl(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) {
    for (const x of v) {
      const u = imageUrl(x);
      if (u) return u;
    }
    return undefined;
  }
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return imageUrl(o.url ?? o.contentUrl);
  }
  return undefined;
}

/**
 * A ranked item as a resource: `data` is its schema.org object (kept whole), with the item's url
 * and name when the object lacks them, plus the ranking: `score`, `site` and the ranker's
 * `relevance` text. `uri` is the item's url. An `image` given as an ImageObject or a list
 * becomes its first URL (still valid schema.org), since 0.5 clients (NLWeb_Core's page) put
 * `image` into an <img src>.
 */
export function itemResource(item: ResultItem): ResourceContent {
  const { image: given, ...schema } = item.schema_object;
  const image = imageUrl(given);
  return {
    type: 'resource',
    resource: {
      uri: item.url,
      data: {
        ...schema,
        '@type': schema['@type'] ?? 'Thing',
        url: schema.url ?? item.url,
        name: schema.name ?? item.name,
        ...(image ? { image } : {}),
        score: item.score,
        site: item.site,
        relevance: item.description,
      },
    },
  };
}

const text = (t: string): TextContent => ({ type: 'text', text: t });

/** What one router message adds to a 0.5 answer. */
interface Step {
  content: Content[];
  elicitation?: string;
  failure?: Failure;
}

/**
 * The state of one 0.5 answer: the fold of its messages (which items were sent), whether a text
 * item was, what to say when the router sent no words. Shared by the streaming and the
 * collecting renderer.
 */
class Answer {
  private readonly fold: AnswerFold;
  private readonly names: string[] = [];
  results = 0;
  texts = 0;

  constructor(readonly call: AskCall) {
    this.fold = new AnswerFold(call.request, { maxResults: Infinity, keep: typeFilter(call) });
  }

  private resources(fresh: readonly ResultItem[]): Content[] {
    this.names.push(...fresh.map((item) => item.name));
    this.results += fresh.length;
    return fresh.map(itemResource);
  }

  private text(t: string): Content[] {
    if (t.trim() === '') return [];
    this.texts++;
    return [text(t)];
  }

  step(m: Message): Step {
    const step = this.fold.add(m);
    switch (step.kind) {
      case 'tool': {
        const tool = toolContent(m) ?? { texts: [], resources: [] };
        this.results += tool.resources.length;
        return { content: [...tool.texts.flatMap((t) => this.text(t)), ...tool.resources] };
      }
      case 'results':
        return { content: this.resources(step.fresh) };
      case 'summary':
        return { content: this.text(step.text) };
      case 'answer':
        return { content: [...this.text(step.text), ...this.resources(step.fresh)] };
      case 'note':
        return step.type === 'no_results' || step.type === 'site_is_irrelevant_to_query'
          ? { content: this.text(step.text) }
          : { content: [] };
      case 'ask_user':
        // The question as text, and as a schema.org Question: pages that show only resources
        // (NLWeb_Core's) show it too.
        return {
          content: [
            ...this.text(step.text),
            {
              type: 'resource',
              resource: { data: { '@type': 'Question', name: step.text, text: step.text } },
            },
          ],
          elicitation: step.text,
        };
      case 'error':
        return { content: [], failure: step.failure };
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
    if (this.names.length === 0) return text(`Found ${this.results} for "${q}".`);
    const shown = this.names.slice(0, 3).join('; ');
    const more = this.names.length > 3 ? ` and ${this.names.length - 3} more` : '';
    const n = `${this.names.length} result${this.names.length === 1 ? '' : 's'}`;
    return text(`Found ${n} for "${q}": ${shown}${more}.`);
  }
}

function failureBody(ids: V05Ids, f: Failure): V05FailureBody {
  return v05Failure(ids, v05ErrorCode(f.code), f.error);
}

/**
 * Renders a streamed 0.5 answer as NLWeb_Core streams one: one `{_meta}` event, then
 * `{content: [...]}` events as results pass the ranker. The `_meta` goes out with the first
 * thing the router has to say, so that its response_type is known: Elicitation when that is
 * the router's question (the question is then the text item), else Answer (a question after
 * results is only a text item: the answer's type was already said). At the end a text item
 * composed from the results when the router sent none. A failure is one event: a `_meta` with
 * `error` (and NLWeb_Core's `nlweb/streaming_status: "error"`) and the message as text.
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
    if (m.message_type === 'begin-nlweb-response') return '';
    if (m.message_type === 'end-nlweb-response') return this.finish();
    const step = this.answer.step(m);
    if (step.failure) return this.fail(step.failure);
    if (step.content.length === 0) return '';
    return (
      this.begin(step.elicitation !== undefined ? 'Elicitation' : 'Answer') +
      sseFrame({ content: step.content })
    );
  }

  /** Ends the answer: a composed text item when it has none yet. */
  finish(): string {
    if (this.done) return '';
    const out =
      this.answer.texts === 0 ? this.begin('Answer') + sseFrame({ content: [this.answer.composed()] }) : '';
    this.done = true;
    return out;
  }

  /** A Failure event; nothing follows it. */
  fail(f: Failure): string {
    if (this.done) return '';
    this.began = true;
    this.done = true;
    const body = failureBody(this.ids, f);
    return sseFrame({ ...body, _meta: { ...body._meta, 'nlweb/streaming_status': 'error' } });
  }

  private begin(type: V05ResponseType): string {
    if (this.began) return '';
    this.began = true;
    return sseFrame({ _meta: v05Meta(this.ids, type) });
  }
}

/** Collects a whole 0.5 answer for a non-streaming response. */
export class V05Collector {
  private readonly answer: Answer;
  private readonly ids: V05Ids;
  private readonly content: Content[] = [];
  private readonly texts: Content[] = [];
  private elicitation?: string;
  private sawContent = false;
  private failure?: Failure;

  constructor(call: AskCall) {
    this.answer = new Answer(call);
    this.ids = callIds(call);
  }

  add(m: Message): void {
    if (this.failure) return;
    const step = this.answer.step(m);
    if (step.failure) this.failure = step.failure;
    // As in a stream: the router's question makes an Elicitation only when it comes first.
    if (step.elicitation !== undefined && !this.sawContent) this.elicitation = step.elicitation;
    if (step.content.length) this.sawContent = true;
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
