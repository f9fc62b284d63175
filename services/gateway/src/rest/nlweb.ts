/**
 * REST /ask in NLWeb's dialects: the 2025 messages, the May–Aug 2025 format of its pages
 * (nlweb01), v0.55 named events. Detected in dialect.ts; parsed here into the one AskRequest;
 * rendered by render.ts, streamed as SSE or collected into one JSON body.
 */
import { z } from 'zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createMessageFactory } from '@askbus/contracts';
import { askRequest } from '../ask/runner';
import type { AskCall } from '../dialect';
import { BadRequestError } from '../errors';
import { pendingHeaders, writer } from '../http';
import { JsonCollector, KEEPALIVE, SSE_HEADERS, SseRenderer, errorBody } from '../render';
import { V05BadRequestError, V05_VERSION } from '../v05';
import { isV05FlatRequest } from '../v05-detect';
import {
  SiteEntry,
  intParam,
  isRecord,
  lowerOptional,
  modeParam,
  optional,
  prevList,
  scalar,
  shownValue,
  siteList,
  sseAccepted,
  streamingFlag,
  textParam,
} from './params';
import type { Bag } from './params';
import type { Pump } from './pump';

/** The flat /ask parameters, by their wire names. Unknown parameters are ignored, as NLWeb does. */
export const AskParams = z.object({
  query: z.preprocess(
    scalar,
    z
      .string({ error: (iss) => (iss.input === undefined ? 'query is required' : 'query must be text') })
      .trim()
      .min(1, 'query is required and must not be blank')
      .max(10_000, 'query is longer than 10000 characters'),
  ),
  site: z.preprocess(siteList, z.array(SiteEntry).max(100, 'site names at most 100 sites').optional()),
  prev: z.preprocess(
    prevList,
    z
      .array(
        z
          .string({ error: 'prev entries must be strings or {"query": "..."} objects' })
          .max(10_000, 'a prev entry is longer than 10000 characters'),
        {
          error: 'prev must be a comma list or a JSON array of strings or {"query": "..."} objects',
        },
      )
      .max(50, 'prev holds at most 50 queries')
      .optional(),
  ),
  mode: modeParam('mode'),
  generate_mode: modeParam('generate_mode'),
  streaming: z.preprocess(streamingFlag, z.boolean({ error: 'streaming must be true or false' })),
  stream: z.preprocess(lowerOptional, z.string({ error: 'stream must be true or false' }).optional()),
  conversation_id: textParam('conversation_id', 200),
  max_results: intParam('max_results', 1, 100),
  min_score: intParam('min_score', 0, 100),
  query_id: z.preprocess(optional, z.unknown()),
  tool: textParam('tool', 100),
  response_format: textParam('response_format', 100),
  _protocol_version: textParam('_protocol_version', 20),
  api_version: textParam('api_version', 20),
  thread_id: textParam('thread_id', 200),
});

/**
 * Parameters only NLWeb's own May–Aug 2025 pages send (streaming.js: `item_to_remember` and
 * `context_url` on every question; fp-chat-interface.js: `display_mode`). A GET carrying one is
 * answered in the format those pages read (nlweb01); `api_version=0.1` asks for it explicitly.
 */
export const LEGACY_PAGE_PARAMS = ['display_mode', 'item_to_remember', 'context_url'] as const;
export const LEGACY_API_VERSION = '0.1';

/** The flat dialect a client of the 2025 parameters gets: nlweb01 for NLWeb's 2025 pages. */
function flatDialect(bag: Bag, apiVersion: string | undefined): 'nlweb' | 'nlweb01' {
  if (apiVersion !== undefined) return apiVersion.trim() === LEGACY_API_VERSION ? 'nlweb01' : 'nlweb';
  return LEGACY_PAGE_PARAMS.some((k) => bag[k] !== undefined) ? 'nlweb01' : 'nlweb';
}

/** AskRequest fields back to the wire names a client knows. */
const WIRE_NAME: Record<string, string> = {
  queryId: 'query_id',
  conversationId: 'conversation_id',
  maxResults: 'max_results',
  minScore: 'min_score',
};

/** v0.55 wire names of the flattened parameters, for error messages. */
const V055_NAME: Record<string, string> = {
  query: 'query.text',
  site: 'query.site',
  prev: 'context.prev',
  streaming: 'prefer.streaming',
  mode: 'prefer.mode',
  response_format: 'prefer.response_format',
  _protocol_version: 'meta.version',
};

/**
 * A JSON scalar as the text a query string would carry; anything else is left for the schema to
 * refuse (String() of `{"toString":1}` throws, and of `{}` is "[object Object]").
 */
const scalarText = (v: unknown): unknown => (typeof v === 'boolean' || typeof v === 'number' ? String(v) : v);

/** Flattens a v0.55 structured body as NLWeb's AskAgent does (nlweb.md §1.1). */
export function flattenV055(body: Bag): Bag {
  const { query, context, prefer, meta, ...rest } = body;
  for (const [name, part] of [
    ['context', context],
    ['prefer', prefer],
    ['meta', meta],
  ] as const) {
    if (part !== undefined && part !== null && !isRecord(part)) {
      throw new BadRequestError(name, `${name} must be an object`);
    }
  }
  const out: Bag = { ...rest };
  const { text, site, ...queryRest } = query as Bag;
  Object.assign(out, queryRest);
  out.query = text;
  if (site !== undefined) out.site = site;
  if (isRecord(context) && context.prev !== undefined) out.prev = context.prev;
  if (isRecord(prefer)) {
    if (prefer.streaming !== undefined) out.streaming = scalarText(prefer.streaming);
    if (prefer.mode !== undefined) out.mode = prefer.mode;
    if (prefer.response_format !== undefined) out.response_format = prefer.response_format;
  }
  out._protocol_version = isRecord(meta) && meta.version !== undefined ? scalarText(meta.version) : '0.55';
  return out;
}

/**
 * The NLWeb dialects of /ask: the 2025 parameters (query string, form or JSON body), their
 * May–Aug 2025 form (nlweb01) and the v0.55 structured body, flattened (`structured`).
 */
export function parseNlweb(fromQuery: Bag, body: Bag | undefined, accept: string | undefined): AskCall {
  const structured = body !== undefined && isRecord(body.query);
  const bag: Bag = { ...fromQuery, ...(structured ? flattenV055(body) : body) };
  // H5 (protocol 0.5): `api_version=0.5` and NLWeb_Core's page (v05-detect.ts) get 0.5, errors too.
  const v05Flat = !structured && isV05FlatRequest(fromQuery, body !== undefined, accept);
  const Bad = v05Flat ? V05BadRequestError : BadRequestError;

  const parsed = AskParams.safeParse(bag);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = String(issue?.path[0] ?? 'query');
    const name = structured ? (V055_NAME[key] ?? key) : key;
    const given = bag[key];
    const shown = shownValue(given);
    const text = issue?.message ?? `${key} is invalid`;
    const message = text.startsWith(key) ? name + text.slice(key.length) : `${name}: ${text}`;
    throw new Bad(name, message + shown);
  }
  const p = parsed.data;

  const request = askRequest({
    queryId: p.query_id,
    query: p.query,
    site: p.site,
    prev: p.prev,
    mode: p.mode ?? p.generate_mode,
    // NLWeb's Aug 2025 page names its conversation `thread_id`.
    conversationId: p.conversation_id ?? p.thread_id,
    maxResults: p.max_results,
    minScore: p.min_score,
    tool: p.tool,
  });
  if (!request.success) {
    const issue = request.error.issues[0];
    const key = String(issue?.path[0] ?? 'query');
    throw new Bad(WIRE_NAME[key] ?? key, `${WIRE_NAME[key] ?? key} is invalid: ${issue?.message ?? ''}`);
  }

  const forced = sseAccepted(accept) || ['true', '1', 'yes'].includes(p.stream ?? '');
  const dialect = structured ? 'v055' : v05Flat ? 'v05' : flatDialect(bag, p.api_version);
  return {
    request: request.data,
    streaming: p.streaming || forced,
    dialect,
    ...(structured ? { protocolVersion: p._protocol_version ?? '0.55' } : {}),
    ...(v05Flat ? { protocolVersion: p.api_version ?? V05_VERSION } : {}),
    ...(dialect === 'nlweb01'
      ? { protocolVersion: LEGACY_API_VERSION, legacyHtml: bag.display_mode !== undefined }
      : {}),
    ...(p.response_format !== undefined ? { responseFormat: p.response_format } : {}),
  };
}

/** How long an SSE answer's headers wait for its first message before they are sent alone. */
const HEADERS_ALONE_MS = 50;

export async function streamNlweb(
  call: AskCall,
  req: FastifyRequest,
  reply: FastifyReply,
  pump: Pump,
  keepAliveMs: number,
): Promise<FastifyReply> {
  const raw = reply.raw;
  const stamp = createMessageFactory(call.request.conversationId, `gateway-${call.request.queryId}`);
  const renderer = new SseRenderer(call, stamp);
  const write = writer(raw);
  raw.on('error', (err) => req.log.debug({ err }, 'SSE response failed'));
  reply.hijack();
  raw.writeHead(200, { ...pendingHeaders(reply), ...SSE_HEADERS, 'x-query-id': call.request.queryId });
  // The headers leave with the first message (begin-nlweb-response, which comes with the first
  // result or alone after the bus's JOIN_WAIT_MS), in one socket write instead of two; alone only
  // when nothing has come by HEADERS_ALONE_MS.
  const headersAlone = setTimeout(() => {
    if (!raw.destroyed && !raw.writableEnded) raw.flushHeaders();
  }, HEADERS_ALONE_MS);
  const keepalive = setInterval(() => void write(KEEPALIVE), keepAliveMs);
  try {
    const { failure, clientGone } = await pump((m) => write(renderer.render(m)));
    if (clientGone) return reply;
    await write(failure ? renderer.fail(failure) : renderer.finish());
    return reply;
  } finally {
    clearTimeout(headersAlone);
    clearInterval(keepalive);
    if (!raw.destroyed && !raw.writableEnded) raw.end();
  }
}

export async function collectNlweb(call: AskCall, reply: FastifyReply, pump: Pump): Promise<FastifyReply> {
  const collector = new JsonCollector(call);
  const { failure } = await pump((m) => collector.add(m));
  reply.header('x-query-id', call.request.queryId);
  if (failure) return reply.code(failure.status).send(errorBody(call, failure));
  return reply.send(collector.body());
}
