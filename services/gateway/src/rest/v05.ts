/**
 * REST /ask in protocol 0.5 (nlweb-typespec): detected in dialect.ts (v05-detect.ts), parsed
 * here into the one AskRequest, rendered by v05.ts. The I/O of its answer: one JSON body, or SSE events as the router's messages
 * arrive. The SSE head is written with the first event, so a failure before it (no router, a
 * time-out) still gets its HTTP status and a Failure body.
 */
import { z } from 'zod';
import type { FastifyReply } from 'fastify';
import type { AskFilters } from '@askbus/contracts';
import { askRequest } from '../ask/runner';
import type { AskCall } from '../dialect';
import { pendingHeaders, writer } from '../http';
import { KEEPALIVE, SSE_HEADERS } from '../render';
import { V05Collector, V05Stream, v05FailureOf } from '../v05';
import { V05BadRequestError } from '../v05';
import { SiteEntry, isRecord, pathName, prevEntry, shownValue, siteList, sseAccepted } from './params';
import type { Bag } from './params';
import type { Pump } from './pump';

export async function answerV05(
  call: AskCall,
  reply: FastifyReply,
  pump: Pump,
  keepAliveMs: number,
): Promise<FastifyReply> {
  const queryId = call.request.queryId;
  if (!call.streaming) {
    const collector = new V05Collector(call);
    const { failure } = await pump((m) => collector.add(m));
    const { status, body } = collector.result(failure);
    return reply.header('x-query-id', queryId).code(status).send(body);
  }

  const raw = reply.raw;
  const renderer = new V05Stream(call);
  const write = writer(raw);
  raw.on('error', (err) => reply.log.debug({ err }, 'SSE response failed'));
  reply.hijack();
  let headed = false;
  const head = (): void => {
    if (headed || raw.headersSent) return;
    headed = true;
    raw.writeHead(200, { ...pendingHeaders(reply), ...SSE_HEADERS, 'x-query-id': queryId });
    raw.flushHeaders();
  };
  const keepalive = setInterval(() => {
    head();
    void write(KEEPALIVE);
  }, keepAliveMs);
  try {
    const { failure, clientGone } = await pump((m) => {
      const out = renderer.render(m);
      if (!out) return;
      head();
      return write(out);
    });
    if (clientGone) return reply;
    if (failure && !headed) {
      raw.writeHead(failure.status, {
        ...pendingHeaders(reply),
        'content-type': 'application/json; charset=utf-8',
        'x-query-id': queryId,
      });
      raw.end(JSON.stringify(v05FailureOf(call, failure)));
      return reply;
    }
    head();
    await write(failure ? renderer.fail(failure) : renderer.finish());
    return reply;
  } finally {
    clearInterval(keepalive);
    if (!raw.destroyed && !raw.writableEnded) raw.end();
  }
}

// ---------------------------------------------------------------------------------------------
// NLWeb protocol 0.5 (nlweb-typespec `AskRequest`): query, context, return_response, meta.

// isV05Body (which bodies are 0.5) lives in v05-detect.ts.

/** `query` keys that are not retrieval filters. */
const V05_QUERY_KEYS = new Set(['text', 'site']);
const MAX_FILTERS = 50;

const filterScalar = (v: unknown): boolean =>
  (typeof v === 'string' && v.length <= 1_000) ||
  (typeof v === 'number' && Number.isFinite(v)) ||
  typeof v === 'boolean';

/** `return_response.mode`: one mode or NLWeb's comma list ("list, summarize"); the fullest wins. */
function v05Mode(v: unknown): unknown {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') return v;
  const parts = v
    .toLowerCase()
    .split(/[\s,]+/)
    .filter(Boolean);
  if (parts.length === 0) return undefined;
  for (const m of ['generate', 'summarize', 'list', 'none']) if (parts.includes(m)) return m;
  return v;
}

/** Booleans, or the text "true"/"false" some clients send. */
export function v05Bool(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const x = v.trim().toLowerCase();
  return x === 'true' ? true : x === 'false' ? false : v;
}

export const v05Text = (name: string, max: number) =>
  z
    .string({ error: `${name} must be text` })
    .max(max, `${name} is longer than ${max} characters`)
    .optional();

const V05Body = z.object({
  query: z.looseObject(
    {
      text: z
        .string({
          error: (iss) => (iss.input === undefined ? 'query.text is required' : 'query.text must be text'),
        })
        .trim()
        .min(1, 'query.text must not be blank')
        .max(10_000, 'query.text is longer than 10000 characters'),
      site: z.preprocess(
        siteList,
        z
          .array(SiteEntry, { error: 'query.site must be a list of site names' })
          .max(100, 'query.site names at most 100 sites')
          .optional(),
      ),
      location: v05Text('query.location', 1_000),
      price: v05Text('query.price', 1_000),
      type: z
        .union(
          [z.string().trim().min(1).max(100), z.array(z.string().trim().min(1).max(100)).min(1).max(20)],
          {
            error: 'query.type must be a schema.org type name (e.g. "Movie") or a list of them',
          },
        )
        .optional(),
    },
    {
      error: (iss) =>
        iss.input === undefined
          ? 'query is required: {"text": "...", "site": [...], ...}'
          : 'query must be an object: {"text": "...", "site": [...], ...}',
    },
  ),
  context: z
    .looseObject(
      {
        prev: z.preprocess(
          (v) => (Array.isArray(v) ? v.map(prevEntry) : v),
          z
            .array(
              z
                .string({ error: 'context.prev entries must be strings' })
                .max(10_000, 'a context.prev entry is longer than 10000 characters'),
              { error: 'context.prev must be an array of earlier queries' },
            )
            .max(50, 'context.prev holds at most 50 queries')
            .optional(),
        ),
        text: v05Text('context.text', 10_000),
        memory: z
          .array(z.string({ error: 'context.memory entries must be strings' }).max(10_000), {
            error: 'context.memory must be an array of strings',
          })
          .max(100, 'context.memory holds at most 100 entries')
          .optional(),
      },
      { error: 'context must be an object: {"prev": [...], "text": "...", "memory": [...]}' },
    )
    .optional(),
  return_response: z
    .looseObject(
      {
        streaming: z.preprocess(
          v05Bool,
          z.boolean({ error: 'return_response.streaming must be true or false' }).optional(),
        ),
        format: v05Text('return_response.format', 100),
        mode: z.preprocess(
          v05Mode,
          z
            .enum(['list', 'none', 'summarize', 'generate'], {
              error: 'return_response.mode must be one of list, summarize, generate',
            })
            .optional(),
        ),
        lang: v05Text('return_response.lang', 35),
        client_type: z
          .enum(['mobile', 'desktop', 'tablet', 'web'], {
            error: 'return_response.client_type must be one of mobile, desktop, tablet, web',
          })
          .optional(),
      },
      { error: 'return_response must be an object: {"streaming": true, "mode": "list", ...}' },
    )
    .optional(),
  meta: z
    .looseObject(
      {
        conversation_id: v05Text('meta.conversation_id', 200),
        api_version: v05Text('meta.api_version', 20),
        request_id: v05Text('meta.request_id', 200),
      },
      { error: 'meta must be an object: {"conversation_id": "...", "api_version": "0.5", ...}' },
    )
    .optional(),
});

/**
 * The retrieval filters of a 0.5 query: every key but `text` and `site` whose value is text, a
 * number, a boolean or a list of them (others are ignored). `type` among them reaches
 * contracts.search `types` where the router passes it on, and the gateway applies it to results.
 */
function v05Filters(query: Bag): AskFilters | undefined {
  const out: AskFilters = {};
  let n = 0;
  for (const [k, v] of Object.entries(query)) {
    if (V05_QUERY_KEYS.has(k) || k === '' || k.length > 100 || n >= MAX_FILTERS) continue;
    if (filterScalar(v)) out[k] = v as string | number | boolean;
    else if (Array.isArray(v) && v.length <= 100 && v.every(filterScalar))
      out[k] = v as (string | number | boolean)[];
    else continue;
    n++;
  }
  return n > 0 ? out : undefined;
}

/** A protocol 0.5 body as the AskRequest and rendering it calls for (the query string is not read). */
export function parseV05(body: Bag, accept?: string): AskCall {
  const metaIn = isRecord(body.meta) ? body.meta : {};
  // Echo the client's ids in a Failure when they are usable.
  const ids = {
    ...(typeof metaIn.conversation_id === 'string'
      ? { conversation_id: metaIn.conversation_id.slice(0, 200) }
      : {}),
    ...(typeof metaIn.request_id === 'string' ? { request_id: metaIn.request_id.slice(0, 200) } : {}),
  };
  const parsed = V05Body.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue ? pathName(issue.path) : 'query';
    const name = path || 'body';
    const given = issue
      ? issue.path.reduce<unknown>(
          (v, k) => (isRecord(v) || Array.isArray(v) ? (v as Bag)[k as string] : undefined),
          body,
        )
      : undefined;
    const shown = shownValue(given);
    const text = issue?.message ?? `${name} is invalid`;
    const message = text.startsWith(name.replace(/\[\d+\]$/, '')) ? text : `${name}: ${text}`;
    throw new V05BadRequestError(name.replace(/\[\d+\]$/, ''), message + shown, ids);
  }
  const { query, context, return_response: rr, meta } = parsed.data;
  const requestId = meta?.request_id?.trim() || undefined;
  const filters = v05Filters(query);
  const request = askRequest({
    queryId: requestId,
    query: query.text,
    site: query.site,
    prev: (context?.prev ?? []).map((p) => p.trim()).filter((p) => p !== ''),
    mode: rr?.mode,
    conversationId: meta?.conversation_id,
    filters,
  });
  if (!request.success) {
    const issue = request.error.issues[0];
    const key = String(issue?.path[0] ?? 'query');
    const name = V05_FIELD[key] ?? key;
    throw new V05BadRequestError(name, `${name} is invalid: ${issue?.message ?? ''}`, ids);
  }
  return {
    request: request.data,
    streaming: (rr?.streaming ?? true) || sseAccepted(accept),
    dialect: 'v05',
    ...(meta?.api_version !== undefined ? { protocolVersion: meta.api_version } : {}),
    ...(rr?.format !== undefined ? { responseFormat: rr.format } : {}),
    ...(requestId !== undefined ? { requestId } : {}),
    ...(rr?.lang !== undefined ? { lang: rr.lang } : {}),
    ...(rr?.client_type !== undefined ? { clientType: rr.client_type } : {}),
  };
}

/** AskRequest fields back to their 0.5 names, for error messages. */
const V05_FIELD: Record<string, string> = {
  query: 'query.text',
  site: 'query.site',
  prev: 'context.prev',
  conversationId: 'meta.conversation_id',
  filters: 'query',
};
