/**
 * The REST dialects of /ask, in one place: NLWeb's 2025 GET/POST parameters, the v0.55
 * structured POST body and the protocol 0.5 body (nlweb-typespec), all turned into the one
 * AskRequest the services below understand.
 */
import { z } from 'zod';
import { SiteName } from '@askbus/contracts';
import type { AskRequest } from '@askbus/contracts';
import { askRequest, siteNames } from './ask/runner';
import type { AskFilters } from '@askbus/contracts';
import { BadRequestError } from './errors';
import { V05BadRequestError, V05_VERSION } from './v05';
import { isV05Body, isV05FlatRequest, looksLikeV05Json } from './v05-detect';

export { isV05Body } from './v05-detect';

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

/**
 * ` (got …)`: the start of a value as JSON, for error messages. A value too deep to serialise
 * (10 000 nested arrays) must not turn a 400 into a stack overflow and a 500.
 */
function shownValue(given: unknown): string {
  if (given === undefined) return '';
  let text: string | undefined;
  try {
    text = JSON.stringify(given);
  } catch {
    text = Array.isArray(given) ? '[…]' : typeof given === 'object' && given !== null ? '{…}' : String(given);
  }
  return text === undefined ? '' : ` (got ${text.slice(0, 80)})`;
}

/** `site`: comma lists, JSON arrays or repeated keys; spaces become `_`; empty means `all`. */
function siteList(v: unknown): unknown {
  if (v === undefined || v === null) return undefined;
  const parts = (Array.isArray(v) ? v : [v]).flatMap((x): (string | typeof INVALID)[] => {
    if (typeof x === 'number') return [String(x)];
    if (typeof x !== 'string') return [INVALID];
    return x.split(',');
  });
  if (parts.includes(INVALID)) return parts;
  return siteNames(parts as string[]);
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
      const message = `the request body is not valid JSON: ${(err as Error).message}`;
      // H5 (protocol 0.5): a 0.5 client's broken body is answered in 0.5 (v05-detect.ts).
      if (looksLikeV05Json(text)) throw new V05BadRequestError('body', message);
      throw new BadRequestError('body', message);
    }
  }
  if (!isRecord(body)) throw new BadRequestError('body', 'a JSON body must be an object of /ask parameters');
  return body;
}

const sseAccepted = (accept: string | undefined): boolean => /\btext\/event-stream\b/i.test(accept ?? '');

/** Turns an /ask request of any dialect into the AskRequest and rendering it calls for. */
export function parseAsk(input: AskInput): AskCall {
  const fromQuery = isRecord(input.query) ? input.query : {};
  const body = bodyBag(input.body);
  if (body !== undefined && isV05Body(body)) return parseV05(body, input.accept);
  const structured = body !== undefined && isRecord(body.query);
  const bag: Bag = { ...fromQuery, ...(structured ? flattenV055(body) : body) };
  // H5 (protocol 0.5): `api_version=0.5` and NLWeb_Core's page (v05-detect.ts) get 0.5, errors too.
  const v05Flat = !structured && isV05FlatRequest(fromQuery, body !== undefined, input.accept);
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

  const forced = sseAccepted(input.accept) || ['true', '1', 'yes'].includes(p.stream ?? '');
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

/** Parses an application/x-www-form-urlencoded body; repeated keys become arrays. */
export function parseForm(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(text)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
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
function v05Bool(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const x = v.trim().toLowerCase();
  return x === 'true' ? true : x === 'false' ? false : v;
}

const v05Text = (name: string, max: number) =>
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

/** A zod issue path as the wire names it: `context.prev[2]`. */
const pathName = (path: readonly PropertyKey[]): string =>
  path.reduce<string>(
    (acc, k) => (typeof k === 'number' ? `${acc}[${k}]` : acc ? `${acc}.${String(k)}` : String(k)),
    '',
  );

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
