/**
 * The one dialect detector of REST /ask: a protocol 0.5 body (v05-detect.ts) goes to
 * rest/v05.ts, every other request to NLWeb's dialects (rest/nlweb.ts: the 2025 parameters,
 * their May–Aug 2025 form, the v0.55 structured body). Each dialect's parser turns it into the
 * one AskRequest (the runner's askRequest) and says how to render the answer.
 */
import type { AskRequest } from '@askbus/contracts';
import { parseNlweb } from './rest/nlweb';
import { bodyBag, isRecord } from './rest/params';
import { parseV05 } from './rest/v05';
import { isV05Body } from './v05-detect';

export { isV05Body } from './v05-detect';
export { flattenV055, LEGACY_API_VERSION, LEGACY_PAGE_PARAMS } from './rest/nlweb';
export { parseV05 } from './rest/v05';
export { parseWho } from './rest/who';
export type { WhoCall } from './rest/who';

/**
 * How the answer is rendered: NLWeb's unnamed `data:` events (the message schema of Sept 2025
 * on, or `nlweb01`: the May–Aug 2025 format its own pages read, see pages/legacy.ts), v0.55
 * named events, or the protocol 0.5 `{_meta, content}` envelope.
 */
export type Dialect = 'nlweb' | 'nlweb01' | 'v055' | 'v05';

/** One /ask call: what to ask the router and how to render its answer. */
export interface AskCall {
  request: AskRequest;
  streaming: boolean;
  dialect: Dialect;
  /**
   * v0.55 `meta.version` or 0.5 `meta.api_version` as the client sent it (the gateway answers
   * in 0.55 or 0.5).
   */
  protocolVersion?: string;
  /** v0.55 `prefer.response_format` or 0.5 `return_response.format`, kept for renderers to come. */
  responseFormat?: string;
  /** 0.5 `meta.request_id`, echoed in `_meta.request_id` (else the query id is). */
  requestId?: string;
  /** 0.5 `return_response.lang` and `client_type`, kept for renderers to come. */
  lang?: string;
  clientType?: string;
  /** nlweb01: the page puts text into innerHTML (NLWeb's Aug 2025 page), so text is escaped. */
  legacyHtml?: boolean;
}

/** What an /ask request brings: parsed query string, parsed body, Accept header. */
export interface AskInput {
  query: unknown;
  body: unknown;
  accept?: string | undefined;
}

/** Turns an /ask request of any dialect into the AskRequest and rendering it calls for. */
export function parseAsk(input: AskInput): AskCall {
  const fromQuery = isRecord(input.query) ? input.query : {};
  const body = bodyBag(input.body);
  if (body !== undefined && isV05Body(body)) return parseV05(body, input.accept);
  return parseNlweb(fromQuery, body, input.accept);
}

/** Parses an application/x-www-form-urlencoded body; repeated keys become arrays. */
export function parseForm(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(text)) {
    const prev = Object.hasOwn(out, k) ? out[k] : undefined;
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}
