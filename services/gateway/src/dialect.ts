/**
 * The REST dialects of /ask, in one place: NLWeb's 2025 GET/POST parameters and the v0.55
 * structured POST body, both turned into the one AskRequest the services below understand.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { AskRequest, SiteName, SubjectToken } from '@askbus/contracts';
import { BadRequestError } from './errors';

/** How the answer is rendered: NLWeb's unnamed `data:` events, or v0.55 named events. */
export type Dialect = 'nlweb' | 'v055';

/** One /ask call: what to ask the router and how to render its answer. */
export interface AskCall {
  request: AskRequest;
  streaming: boolean;
  dialect: Dialect;
  /** v0.55 `meta.version` as the client sent it (the gateway answers in 0.55). */
  protocolVersion?: string;
  /** v0.55 `prefer.response_format`, kept for renderers to come. */
  responseFormat?: string;
}

/** What an /ask request brings: parsed query string, parsed body, Accept header. */
export interface AskInput {
  query: unknown;
  body: unknown;
  accept?: string | undefined;
}

type Bag = Record<string, unknown>;

const isRecord = (v: unknown): v is Bag => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Repeated query-string keys take the first value; numbers and booleans become text. */
function scalar(v: unknown): unknown {
  const x = Array.isArray(v) ? v[0] : v;
  if (typeof x === 'number' || typeof x === 'boolean') return String(x);
  return x === null ? undefined : x;
}

/** Like `scalar`, but an empty value counts as not given. */
function optional(v: unknown): unknown {
  const x = scalar(v);
  return typeof x === 'string' && x.trim() === '' ? undefined : x;
}

const lowerOptional = (v: unknown): unknown => {
  const x = optional(v);
  return typeof x === 'string' ? x.trim().toLowerCase() : x;
};

const INVALID = Symbol('invalid');

/** `site`: comma lists, JSON arrays or repeated keys; spaces become `_`; empty means `all`. */
function siteList(v: unknown): unknown {
  if (v === undefined || v === null) return undefined;
  const parts = (Array.isArray(v) ? v : [v]).flatMap((x): (string | typeof INVALID)[] => {
    if (typeof x === 'number') return [String(x)];
    if (typeof x !== 'string') return [INVALID];
    return x.split(',');
  });
  if (parts.includes(INVALID)) return parts;
  const names = (parts as string[]).map((s) => s.trim().replace(/ /g, '_')).filter((s) => s !== '');
  if (names.length === 0) return undefined;
  if (names.some((s) => s.toLowerCase() === 'all')) return ['all'];
  return [...new Set(names)];
}

/** One previous query: a string, or NLWeb's `{query}` (or `{text}`) object. */
function prevEntry(x: unknown): unknown {
  if (typeof x === 'string') return x;
  if (isRecord(x)) {
    if (typeof x.query === 'string') return x.query;
    if (typeof x.text === 'string') return x.text;
  }
  return INVALID;
}

/** `prev`: a comma list, a JSON array (text or parsed) of strings or `{query}` objects. */
function prevList(v: unknown): unknown {
  if (v === undefined || v === null) return undefined;
  let entries: unknown[];
  if (Array.isArray(v)) entries = v.map(prevEntry);
  else if (typeof v === 'string') {
    const s = v.trim();
    if (s.startsWith('[')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(s);
      } catch {
        // NLWeb's own fallback: strip the brackets and split on commas.
        parsed = s
          .slice(1, s.endsWith(']') ? -1 : undefined)
          .split(',')
          .map((p) => p.trim().replace(/^"(.*)"$/, '$1'));
      }
      entries = Array.isArray(parsed) ? parsed.map(prevEntry) : [INVALID];
    } else entries = s.split(',');
  } else if (isRecord(v)) entries = [prevEntry(v)];
  else entries = [INVALID];
  if (entries.includes(INVALID)) return entries;
  return (entries as string[]).map((s) => s.trim()).filter((s) => s !== '');
}

/** `streaming`: anything but false/0 streams (NLWeb); not given means stream. */
function streamingFlag(v: unknown): unknown {
  const x = optional(v);
  if (x === undefined) return true;
  if (typeof x !== 'string') return x;
  return !['false', '0'].includes(x.trim().toLowerCase());
}

const intParam = (name: string, min: number, max: number) => {
  const msg = `${name} must be an integer from ${min} to ${max}`;
  return z.preprocess(
    optional,
    z
      .string({ error: msg })
      .trim()
      .regex(/^[+-]?\d+$/, msg)
      .transform(Number)
      .pipe(z.number().int(msg).min(min, msg).max(max, msg))
      .optional(),
  );
};

const modeParam = (name: string) =>
  z.preprocess(
    lowerOptional,
    z
      .enum(['list', 'none', 'summarize', 'generate'], {
        error: `${name} must be one of list, summarize, generate (none means list)`,
      })
      .optional(),
  );

const textParam = (name: string, max: number) =>
  z.preprocess(
    optional,
    z
      .string({ error: `${name} must be text` })
      .max(max, `${name} is longer than ${max} characters`)
      .optional(),
  );

const SiteEntry = z.union([z.literal('all'), SiteName], {
  error: 'site names are letters, digits, "_", "." or "-" (comma-separate several sites)',
});

/** The flat /ask parameters, by their wire names. Unknown parameters are ignored, as NLWeb does. */
const AskParams = z.object({
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
});

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
    if (prefer.streaming !== undefined) out.streaming = String(prefer.streaming);
    if (prefer.mode !== undefined) out.mode = prefer.mode;
    if (prefer.response_format !== undefined) out.response_format = prefer.response_format;
  }
  out._protocol_version = isRecord(meta) && meta.version !== undefined ? String(meta.version) : '0.55';
  return out;
}

/** A POST body as a parameter bag: JSON objects, form fields, or JSON sent as text. */
function bodyBag(body: unknown): Bag | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    const text = body.toString().trim();
    if (text === '') return undefined;
    if (!text.startsWith('{')) {
      throw new BadRequestError(
        'body',
        'a POST body must be a JSON object or application/x-www-form-urlencoded',
      );
    }
    try {
      return bodyBag(JSON.parse(text));
    } catch (err) {
      if (err instanceof BadRequestError) throw err;
      throw new BadRequestError('body', `the request body is not valid JSON: ${(err as Error).message}`);
    }
  }
  if (!isRecord(body)) throw new BadRequestError('body', 'a JSON body must be an object of /ask parameters');
  return body;
}

const sseAccepted = (accept: string | undefined): boolean => /\btext\/event-stream\b/i.test(accept ?? '');

/** Turns an /ask request of either dialect into the AskRequest and rendering it calls for. */
export function parseAsk(input: AskInput): AskCall {
  const fromQuery = isRecord(input.query) ? input.query : {};
  const body = bodyBag(input.body);
  const structured = body !== undefined && isRecord(body.query);
  const bag: Bag = { ...fromQuery, ...(structured ? flattenV055(body) : body) };

  const parsed = AskParams.safeParse(bag);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = String(issue?.path[0] ?? 'query');
    const name = structured ? (V055_NAME[key] ?? key) : key;
    const given = bag[key];
    const shown = given === undefined ? '' : ` (got ${JSON.stringify(given).slice(0, 80)})`;
    const text = issue?.message ?? `${key} is invalid`;
    const message = text.startsWith(key) ? name + text.slice(key.length) : `${name}: ${text}`;
    throw new BadRequestError(name, message + shown);
  }
  const p = parsed.data;

  const mode = p.mode ?? p.generate_mode ?? 'list';
  const queryId = SubjectToken.safeParse(p.query_id);
  const candidate = {
    queryId: queryId.success ? queryId.data : randomUUID().replaceAll('-', ''),
    query: p.query,
    site: p.site ?? ['all'],
    prev: p.prev ?? [],
    mode: mode === 'none' ? 'list' : mode,
    conversationId: p.conversation_id ?? '',
    maxResults: p.max_results ?? 10,
    minScore: p.min_score ?? 51,
    ...(p.tool !== undefined ? { tool: p.tool } : {}),
  };
  const request = AskRequest.safeParse(candidate);
  if (!request.success) {
    const issue = request.error.issues[0];
    const key = String(issue?.path[0] ?? 'query');
    throw new BadRequestError(
      WIRE_NAME[key] ?? key,
      `${WIRE_NAME[key] ?? key} is invalid: ${issue?.message ?? ''}`,
    );
  }

  const forced = sseAccepted(input.accept) || ['true', '1', 'yes'].includes(p.stream ?? '');
  return {
    request: request.data,
    streaming: p.streaming || forced,
    dialect: structured ? 'v055' : 'nlweb',
    ...(structured ? { protocolVersion: p._protocol_version ?? '0.55' } : {}),
    ...(p.response_format !== undefined ? { responseFormat: p.response_format } : {}),
  };
}

/** Parses an application/x-www-form-urlencoded body; repeated keys become arrays. */
export function parseForm(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(text)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}
