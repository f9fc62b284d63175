/**
 * Renderers of the router's one Message stream into the REST dialects: NLWeb 2025 SSE (the
 * message schema, or the May–Aug format of NLWeb's own pages), non-streaming JSON, and v0.55
 * named events. They only format; index.ts does the I/O.
 */
import type { Message, MessageBody, ResultItem } from '@askbus/contracts';
import type { AskCall } from './dialect';
import { AnswerFold } from './ask/fold';
import type { Failure } from './errors';
import { legacyBody, legacyFrames } from './pages/legacy';
import type { LegacyOptions } from './pages/legacy';
import { GenerateHold } from './pages/generate-hold';

/** Stamps a gateway-made message body with the NLWeb envelope (createMessageFactory). */
export type Stamp = (body: MessageBody) => Message;

export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

export const KEEPALIVE = ': keepalive\n\n';

/** One SSE event: `data:` only (NLWeb), or `event:` plus `data:` (v0.55). */
export function sseFrame(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
}

/** The ResultItems a message carries: those of `result` messages whose content is a list. */
export function resultItems(m: Message): ResultItem[] {
  return m.message_type === 'result' && Array.isArray(m.content) ? m.content : [];
}

export interface V055Meta {
  version: '0.55';
  response_type: 'answer';
  mode: string;
  site: string | string[];
}

/** The `_meta` of a v0.55 answer; `site` is a string for one site, a list for several (NLWeb). */
export function v055Meta(call: AskCall): V055Meta {
  const site = call.request.site;
  return {
    version: '0.55',
    response_type: 'answer',
    mode: call.request.mode,
    site: site.length === 1 ? site[0]! : site,
  };
}

const legacyOptions = (call: AskCall): LegacyOptions => ({
  queryId: call.request.queryId,
  html: call.legacyHtml ?? false,
});

/**
 * Renders a streamed answer frame by frame. It keeps the stream bracketed: a failure before
 * the router's begin message gets a gateway-made begin, and a stream the router left open gets
 * a gateway-made end.
 */
export class SseRenderer {
  private began = false;
  private ended = false;
  private index = 0;
  private readonly hold: GenerateHold;

  constructor(
    private readonly call: AskCall,
    private readonly stamp: Stamp,
  ) {
    this.hold = new GenerateHold(call.request.mode);
  }

  render(m: Message): string {
    if (m.message_type === 'begin-nlweb-response') this.began = true;
    if (m.message_type === 'end-nlweb-response') this.ended = true;
    if (this.call.dialect === 'nlweb') return sseFrame(m);
    if (this.call.dialect === 'nlweb01') {
      return this.hold
        .pass(m)
        .flatMap((x) => legacyFrames(x, legacyOptions(this.call)))
        .map((f) => sseFrame(f))
        .join('');
    }
    if (m.message_type === 'begin-nlweb-response') {
      return sseFrame({ _meta: v055Meta(this.call), streaming: true }, 'start');
    }
    if (m.message_type === 'end-nlweb-response') {
      return sseFrame({ _meta: { version: '0.55', ...(m.error ? { error: true } : {}) } }, 'complete');
    }
    if (m.message_type === 'result' && Array.isArray(m.content)) {
      return m.content.map((item) => sseFrame({ index: this.index++, item }, 'result')).join('');
    }
    return sseFrame(m);
  }

  /** Closes a stream that ended without end-nlweb-response ('' when it has one). */
  finish(): string {
    if (this.ended) return '';
    return (this.began ? '' : this.begin()) + this.render(this.stamp({ message_type: 'end-nlweb-response' }));
  }

  /** The error message and the closing message of a stream the router could not finish. */
  fail(f: Failure): string {
    let out = this.began ? '' : this.begin();
    out += this.render(this.stamp({ message_type: 'error', error: f.error, code: f.code, status: f.status }));
    if (!this.ended) out += this.render(this.stamp({ message_type: 'end-nlweb-response', error: true }));
    return out;
  }

  private begin(): string {
    return this.render(this.stamp({ message_type: 'begin-nlweb-response', query: this.call.request.query }));
  }
}

/** Collects a whole answer for a non-streaming response (the messages as they came). */
export class JsonCollector {
  private readonly fold: AnswerFold;

  constructor(private readonly call: AskCall) {
    this.fold = new AnswerFold(call.request, { maxResults: Infinity });
  }

  get messages(): Message[] {
    return this.fold.messages;
  }

  add(m: Message): void {
    this.fold.add(m);
  }

  /** 2025: query_id, conversation_id, results (Legacy-A clients) and messages; v0.55: `_meta` first. */
  body(): Record<string, unknown> {
    if (this.call.dialect === 'nlweb01') {
      const hold = new GenerateHold(this.call.request.mode);
      return legacyBody(
        this.messages.flatMap((m) => hold.pass(m)),
        legacyOptions(this.call),
      );
    }
    const results = this.messages.flatMap(resultItems);
    if (this.call.dialect === 'v055') return { _meta: v055Meta(this.call), results, messages: this.messages };
    return {
      query_id: this.call.request.queryId,
      conversation_id: this.call.request.conversationId,
      results,
      messages: this.messages,
    };
  }
}

/** The JSON body of a non-streaming answer that failed. */
export function errorBody(call: AskCall, f: Failure): Record<string, unknown> {
  return {
    ...(call.dialect === 'v055' ? { _meta: { version: '0.55', response_type: 'failure' } } : {}),
    message_type: 'error',
    error: f.error,
    code: f.code,
    status: f.status,
    query_id: call.request.queryId,
  };
}
