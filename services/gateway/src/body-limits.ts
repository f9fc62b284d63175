/**
 * Bounds on what a request may make the gateway parse, on every surface: a size per surface
 * (Fastify's bodyLimit, the WebSocket maxPayload) and one nesting depth for every JSON text a
 * client sends (bodies, form fields, query parameters, WebSocket frames). The depth is checked
 * as the bytes arrive (json-nesting.ts), so a `[[[…]]]` body is known refused after 65 bytes and
 * never reaches JSON.parse, which blocks the event loop ~1 µs a level (5 s for 9.6 MB).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { JsonNestingScanner, jsonNestingExceeds } from './json-nesting';

const KiB = 1024;
const MiB = 1024 * KiB;

/** The limits of each surface (README: "Limits of requests"). */
export const BODY_LIMITS = {
  /** REST /ask, /who and the chat API: an NLWeb question with its history fits many times. */
  restBytes: MiB,
  /** One MCP JSON-RPC message: a POST /mcp body or a /mcp/ws frame. */
  mcpBytes: MiB,
  /** One A2A request, /a2a and /a2a/rest (was the SDK's 10 MB). */
  a2aBytes: MiB,
  /** Nesting of any JSON a client sends; askbus's own requests nest under 10 levels. */
  jsonDepth: 64,
} as const;

/** A JSON text nested deeper than the gateway parses: a 400 in the surface's own error form. */
export class JsonTooDeepError extends Error {
  readonly statusCode = 400;
  readonly code = 'ASKBUS_JSON_TOO_DEEP';
  /** `body`, or the name of the query parameter or form field. */
  readonly parameter: string;
  constructor(
    readonly maxDepth: number,
    where: { body: true } | { query: string } | { field: string } | { frame: true } = { body: true },
  ) {
    const [what, parameter] =
      'query' in where
        ? [`the query parameter ${where.query}`, where.query]
        : 'field' in where
          ? [`the form field ${where.field}`, where.field]
          : 'frame' in where
            ? ['the frame', 'frame']
            : ['the request body', 'body'];
    super(`${what} nests JSON deeper than ${maxDepth} levels`);
    this.parameter = parameter;
    this.name = 'JsonTooDeepError';
  }
}

/** A body over the size limit found while it was read (Fastify's own: FST_ERR_CTP_BODY_TOO_LARGE). */
class BodyTooLargeError extends Error {
  readonly statusCode = 413;
  readonly code = 'FST_ERR_CTP_BODY_TOO_LARGE';
  constructor() {
    super('Request body is too large');
  }
}

export const isJsonTooDeep = (err: unknown): err is JsonTooDeepError => err instanceof JsonTooDeepError;

/** The message of a 413 from Fastify's bodyLimit, saying what the limit is. */
export const tooLargeMessage = (limitBytes: number): string =>
  `the request body is larger than ${limitBytes >= MiB ? `${limitBytes / MiB} MiB` : `${Math.round(limitBytes / KiB)} KiB`}`;

/** How much of a refused body is kept, so that the answer can be in the dialect it was meant in. */
const HEAD_BYTES = 4 * KiB;
const refusedHeads = new WeakMap<FastifyRequest, string>();

/**
 * The start of a body refused as too deep, with the dialect's member names found after it (for
 * dialect detection), if it was refused.
 */
export function refusedBodyHeadOf(req: FastifyRequest): string | undefined {
  return refusedHeads.get(req);
}

/** A query string value (or values) nested too deep: the parameter's name. */
function tooDeepParameter(query: unknown, maxDepth: number): string | undefined {
  if (typeof query !== 'object' || query === null) return undefined;
  for (const [name, value] of Object.entries(query as Record<string, unknown>)) {
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'string' && jsonNestingExceeds(v, maxDepth))) return name;
  }
  return undefined;
}

/** Form fields nested too deep (a `prev` JSON array sent as a field): throws JsonTooDeepError. */
export function checkFormNesting(form: Record<string, string | string[]>, maxDepth: number): void {
  const name = tooDeepParameter(form, maxDepth);
  if (name !== undefined) throw new JsonTooDeepError(maxDepth, { field: name });
}

/**
 * The member names the /ask dialect detector decides by (v05-detect.ts `looksLikeV05Json`),
 * noted wherever they are in a refused body: a 0.5 body's `return_response` may come after the
 * deep part.
 */
const DIALECT_MEMBERS = /"(?:query|prefer|version|return_response|api_version)"\s*:\s*\{?/g;
/** Enough of the previous piece to find a member name split between two pieces. */
const OVERLAP = 48;

/**
 * The request body as Fastify's body reader sees it, scanned on the way. It starts reading the
 * socket only when Fastify does (a GET's body is never read here: the A2A SDK may read it
 * itself). Past the depth limit nothing more reaches Fastify (nothing is parsed) and the read
 * fails with JsonTooDeepError once the body has ended: the rest is read and dropped, up to the
 * size limit, so that the client, still sending, gets the answer rather than a reset connection
 * (Node's client drops an answer that comes with an EPIPE). A body that outgrows the limit
 * meanwhile is a 413 at once, and the connection closes. On /ask (`dialect`) the member names
 * the dialect detector looks for are noted on the way, so that the answer is in the dialect
 * the body says.
 */
class NestingGuard extends Readable {
  private readonly scanner: JsonNestingScanner;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  /** Each member name once (`"query":{`, `"prefer":` …): the detector needs no more. */
  private readonly members = new Set<string>();
  private overlap = '';
  private bytes = 0;
  private started = false;
  private refused: JsonTooDeepError | undefined;
  private readonly onData = (chunk: Buffer | string): void => this.scan(chunk);
  private readonly onEnd = (): void => {
    if (this.refused) this.refuse(true);
    else this.push(null);
  };
  private readonly onError = (err: Error): void => void this.destroy(err);

  constructor(
    private readonly source: Readable,
    private readonly req: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly maxDepth: number,
    private readonly maxBytes: number,
    private readonly dialect: boolean,
  ) {
    super();
    this.scanner = new JsonNestingScanner(maxDepth);
  }

  override _read(): void {
    if (this.started) {
      this.source.resume();
      return;
    }
    this.started = true;
    this.source.on('data', this.onData);
    this.source.once('end', this.onEnd);
    this.source.once('error', this.onError);
  }

  private scan(data: Buffer | string): void {
    const chunk = typeof data === 'string' ? Buffer.from(data) : data;
    this.bytes += chunk.length;
    if (this.dialect) this.noteMembers(chunk);
    if (!this.refused) {
      if (this.headBytes < HEAD_BYTES) {
        const part = chunk.subarray(0, HEAD_BYTES - this.headBytes);
        this.head.push(part);
        this.headBytes += part.length;
      }
      if (this.scanner.push(chunk)) {
        if (!this.push(chunk)) this.source.pause();
        return;
      }
      this.refused = new JsonTooDeepError(this.maxDepth);
      this.source.resume();
    }
    if (this.bytes > this.maxBytes) this.refuse(false, true);
  }

  private noteMembers(chunk: Buffer): void {
    const text = this.overlap + chunk.toString('latin1');
    for (const m of text.matchAll(DIALECT_MEMBERS)) this.members.add(m[0].replace(/\s+/g, ''));
    this.overlap = text.slice(-OVERLAP);
  }

  /**
   * Fails Fastify's read; the rest of an unfinished body drains and the connection closes. A body
   * that outgrew the size limit while it was read to its end is a 413, its dialect unknown.
   */
  private refuse(ended: boolean, tooLarge = false): void {
    const head = Buffer.concat(this.head).toString('utf8');
    if (!tooLarge)
      refusedHeads.set(this.req, this.members.size ? `${head} ${[...this.members].join(' ')}` : head);
    this.source.off('data', this.onData);
    this.source.off('end', this.onEnd);
    this.source.off('error', this.onError);
    if (!ended) {
      this.reply.header('connection', 'close');
      this.source.resume();
    }
    this.destroy(tooLarge ? new BodyTooLargeError() : this.refused);
  }
}

/**
 * Checks the nesting of every request's query parameters and body, for every route of `app`
 * and of the plugins registered after (MCP and A2A too). Call before any route.
 */
export function limitJsonNesting(app: FastifyInstance, maxDepth: number = BODY_LIMITS.jsonDepth): void {
  app.addHook('preParsing', async (req, reply, payload) => {
    const name = tooDeepParameter(req.query, maxDepth);
    if (name !== undefined) throw new JsonTooDeepError(maxDepth, { query: name });
    const maxBytes = req.routeOptions.bodyLimit ?? BODY_LIMITS.restBytes;
    return new NestingGuard(payload, req, reply, maxDepth, maxBytes, req.url.split('?', 1)[0] === '/ask');
  });
}
