/**
 * REST /who: which loaded sites can answer a query. GET takes NLWeb's 2025 parameters and answers
 * with its who result items; POST takes the protocol 0.5 WhoRequest and answers with `Agent`
 * resources. Both rank the sites as MCP's `who` does (who.ts).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Bus } from '@askbus/bus';
import { createMessageFactory } from '@askbus/contracts';
import { z } from 'zod';
import type { AskInput } from '../dialect';
import { V05BadRequestError } from '../v05';
import { AskParams } from './nlweb';
import {
  bodyBag,
  isRecord,
  optional,
  pathName,
  shownValue,
  sseAccepted,
  streamingFlag,
  textParam,
} from './params';
import type { Bag } from './params';
import { v05Bool, v05Text } from './v05';
import { BadRequestError } from '../errors';
import type { Failure } from '../errors';
import { pendingHeaders } from '../http';
import { SSE_HEADERS, sseFrame } from '../render';
import { V05_VERSION, v05ErrorCode, v05Failure, v05Meta } from '../v05';
import type { Content, V05Response } from '../v05';
import { rankSites, whoFailure } from '../ask/who';
import type { WhoSite as SiteRank } from '@askbus/contracts';

// ---------------------------------------------------------------------------------------------
// /who: NLWeb's 2025 GET parameters, or the protocol 0.5 `WhoRequest` as a POST body.

/** One /who call: which sites can answer `query`, rendered in the dialect it came in. */
export interface WhoCall {
  dialect: 'nlweb' | 'v05';
  query: string;
  streaming: boolean;
  conversationId: string;
  /** 0.5 `constr.type`: only items of these schema.org types count. */
  types?: string[];
}

const WhoParams = z.object({
  query: AskParams.shape.query,
  streaming: z.preprocess(
    (v) => (optional(v) === undefined ? false : streamingFlag(v)),
    z.boolean({ error: 'streaming must be true or false' }),
  ),
  stream: AskParams.shape.stream,
  conversation_id: textParam('conversation_id', 200),
});

const WhoBody = z.object({
  query: z
    .string({ error: (iss) => (iss.input === undefined ? 'query is required' : 'query must be text') })
    .trim()
    .min(1, 'query must not be blank')
    .max(10_000, 'query is longer than 10000 characters'),
  streaming: z.preprocess(v05Bool, z.boolean({ error: 'streaming must be true or false' }).optional()),
  conversation_id: v05Text('conversation_id', 200),
  constr: z
    .looseObject(
      {
        type: z
          .union([z.string().trim().min(1).max(100), z.array(z.string().trim().min(1).max(100)).max(20)], {
            error: 'constr.type must be a schema.org type name (e.g. "Movie") or a list of them',
          })
          .optional(),
      },
      { error: 'constr must be an object of constraints, e.g. {"type": "Movie"}' },
    )
    .optional(),
});

/** Reports the first zod issue of a /who request as a 400 in the dialect's own form. */
function whoError(err: z.ZodError, v05: boolean, input: Bag): never {
  const issue = err.issues[0];
  const name = (issue ? pathName(issue.path) : '') || 'query';
  const given = input[String(issue?.path[0] ?? '')];
  const shown = issue?.path.length !== 1 ? '' : shownValue(given);
  const text = issue?.message ?? `${name} is invalid`;
  const message = (text.startsWith(name) ? text : `${name}: ${text}`) + shown;
  const field = name.replace(/\[\d+\]$/, '');
  throw v05 ? new V05BadRequestError(field, message) : new BadRequestError(field, message);
}

/** GET /who takes the 2025 parameters (streaming defaults to false); POST /who the 0.5 WhoRequest. */
export function parseWho(input: AskInput & { method: string }): WhoCall {
  if (input.method === 'POST') {
    let body: Bag | undefined;
    try {
      body = bodyBag(input.body);
    } catch (err) {
      if (err instanceof BadRequestError) throw new V05BadRequestError(err.parameter, err.message);
      throw err;
    }
    if (body === undefined)
      throw new V05BadRequestError('body', 'POST /who needs a JSON WhoRequest: {"query": "..."}');
    const parsed = WhoBody.safeParse(body);
    if (!parsed.success) whoError(parsed.error, true, body);
    const p = parsed.data;
    const type = p.constr?.type;
    const types = (Array.isArray(type) ? type : type === undefined ? [] : [type]).filter((t) => t !== '');
    return {
      dialect: 'v05',
      query: p.query,
      streaming: (p.streaming ?? true) || sseAccepted(input.accept),
      conversationId: p.conversation_id ?? '',
      ...(types.length ? { types } : {}),
    };
  }
  const bag = isRecord(input.query) ? input.query : {};
  const parsed = WhoParams.safeParse(bag);
  if (!parsed.success) whoError(parsed.error, false, bag);
  const p = parsed.data;
  const forced = sseAccepted(input.accept) || ['true', '1', 'yes'].includes(p.stream ?? '');
  return {
    dialect: 'nlweb',
    query: p.query,
    streaming: p.streaming || forced,
    conversationId: p.conversation_id ?? '',
  };
}

export interface WhoRouteOptions {
  bus: Bus;
  /** The traceparent the bus calls of a request join (runner.ts traceparentFrom). */
  traceparentOf: (req: FastifyRequest) => string | undefined;
  /** Time limit of the whole ranking on the bus (ms). */
  timeoutMs: number;
}

/** NLWeb 2025 who result item: where to ask the site, and why it was chosen. */
export interface WhoItem {
  '@type': string;
  url: string;
  name: string;
  score: number;
  description: string;
  query: string;
  matches: number;
  hits: number;
  item_count: number;
  types: string[];
  best: SiteRank['best'];
}

function describe(s: SiteRank, query: string): string {
  const types = s.types.length ? `; types: ${s.types.join(', ')}` : '';
  return `${s.name}: ${s.matches} of ${s.hits} items found match "${query}", best ${s.best.name} (${s.best.score})${types}`;
}

function whoText(call: WhoCall, sites: readonly SiteRank[]): string {
  if (sites.length === 0) return `No loaded site can answer "${call.query}".`;
  const list = sites.map((s) => `${s.name} (score ${s.score}, ${s.matches} matching items)`).join(', ');
  const n = `${sites.length} site${sites.length === 1 ? '' : 's'}`;
  return `${n} can answer "${call.query}", best first: ${list}.`;
}

export function whoItem(s: SiteRank, call: WhoCall, base: string): WhoItem {
  const q = encodeURIComponent(call.query);
  return {
    '@type': 'Website',
    url: `${base}/?site=${encodeURIComponent(s.name)}&query=${q}&tool=search`,
    name: s.name,
    score: s.score,
    description: describe(s, call.query),
    query: call.query,
    matches: s.matches,
    hits: s.hits,
    item_count: s.item_count,
    types: s.types,
    best: s.best,
  };
}

/** A site as a 0.5 `Agent` resource: an NLWeb search agent at this gateway's /ask. */
export function agentContent(s: SiteRank, call: WhoCall, base: string): Content {
  const url = `${base}/ask`;
  return {
    type: 'resource',
    resource: {
      uri: url,
      data: {
        '@type': 'Search Agent',
        agentSpec: {
          name: s.name,
          description: describe(s, call.query),
          url,
          protocol: 'NLWeb',
          version: V05_VERSION,
          site: s.name,
          types: s.types,
          score: s.score,
          matches: s.matches,
          hits: s.hits,
          best: s.best,
          item_count: s.item_count,
          /** The AskRequest to send this agent. */
          request: { query: { text: call.query, site: [s.name] } },
        },
      },
    },
  };
}

function v05Body(call: WhoCall, sites: readonly SiteRank[], base: string): V05Response {
  return {
    // WhoResponseMeta has no response_type.
    _meta: v05Meta({ conversation_id: call.conversationId }),
    content: [{ type: 'text', text: whoText(call, sites) }, ...sites.map((s) => agentContent(s, call, base))],
  };
}

/** The 2025 messages of a who answer: begin, the result items (or no_results), end. */
function nlwebMessages(call: WhoCall, sites: readonly SiteRank[], base: string): Record<string, unknown>[] {
  const stamp = createMessageFactory(call.conversationId, 'who');
  const begin = stamp({ message_type: 'begin-nlweb-response', query: call.query });
  const middle: Record<string, unknown> = sites.length
    ? { ...stamp({ message_type: 'result', content: [] }), content: sites.map((s) => whoItem(s, call, base)) }
    : stamp({ message_type: 'no_results', content: whoText(call, sites) });
  return [begin, middle, stamp({ message_type: 'end-nlweb-response' })];
}

function failureBody(call: WhoCall, f: Failure): Record<string, unknown> {
  if (call.dialect === 'v05') {
    return { ...v05Failure({ conversation_id: call.conversationId }, v05ErrorCode(f.code), f.error) };
  }
  return { message_type: 'error', error: f.error, code: f.code, status: f.status };
}

/** The base URL clients reached this gateway at (for the links in the answer). */
const baseOf = (req: FastifyRequest): string => `${req.protocol}://${req.host}`;

export async function whoRoutes(app: FastifyInstance, opts: WhoRouteOptions): Promise<void> {
  async function handle(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const call = parseWho({
      method: req.method,
      query: req.query,
      body: req.body,
      accept: req.headers.accept,
    });
    const controller = new AbortController();
    const onClose = (): void => controller.abort();
    reply.raw.on('close', onClose);
    let ranked: SiteRank[];
    try {
      ranked = await rankSites(
        opts.bus,
        { query: call.query, ...(call.types ? { types: call.types } : {}) },
        { timeoutMs: opts.timeoutMs, signal: controller.signal, traceparent: opts.traceparentOf(req) },
      );
    } catch (err) {
      const f = whoFailure(err);
      return reply.code(f.status).send(failureBody(call, f));
    } finally {
      reply.raw.off('close', onClose);
    }
    const sites = ranked;
    const base = baseOf(req);

    if (!call.streaming) {
      if (call.dialect === 'v05') return reply.send(v05Body(call, sites, base));
      const messages = nlwebMessages(call, sites, base);
      return reply.send({
        query: call.query,
        conversation_id: call.conversationId,
        results: sites.map((s) => whoItem(s, call, base)),
        messages,
      });
    }
    let frames: string;
    if (call.dialect === 'v05') {
      const { _meta, content } = v05Body(call, sites, base);
      frames = sseFrame({ _meta }) + sseFrame({ content });
    } else
      frames = nlwebMessages(call, sites, base)
        .map((m) => sseFrame(m))
        .join('');
    reply.hijack();
    reply.raw.writeHead(200, { ...pendingHeaders(reply), ...SSE_HEADERS });
    reply.raw.end(frames);
    return reply;
  }

  app.get('/who', { exposeHeadRoute: false, handler: handle });
  app.post('/who', {
    handler: handle,
    // POST /who speaks 0.5, so its bad requests (unparsable bodies too) are 0.5 Failures.
    errorHandler: (err: FastifyError | BadRequestError, req, reply) => {
      if (err instanceof BadRequestError) return reply.code(400).send(err.responseBody());
      const status = err.statusCode ?? 500;
      if (status >= 400 && status < 500) {
        const code = 'code' in err ? String(err.code) : '';
        const field = code.startsWith('FST_ERR_CTP') ? 'body' : 'request';
        const message = code.startsWith('FST_ERR_CTP')
          ? `the request body is not a JSON WhoRequest (${err.message})`
          : err.message;
        return reply.code(status === 413 ? 413 : 400).send(v05Failure({}, 'INVALID_REQUEST', message, field));
      }
      req.log.error({ err }, 'request failed');
      return reply.code(500).send(v05Failure({}, 'INTERNAL_ERROR', 'internal error in the gateway'));
    },
  });
}
