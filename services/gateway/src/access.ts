/**
 * The gateway's access layer: one check in front of every public surface. A request to a
 * protected surface must present a key valid for it (`Authorization: Bearer <key>` or
 * `X-API-Key: <key>`) when such keys are configured; then it counts against its client's rate
 * limit (@fastify/rate-limit's store, keyed by client name, else by IP) and stream cap. Each
 * plugin says which of its paths are which surface, or open (addRule): probes, the public agent
 * card, the chat page's files; CORS preflights stay open too.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { digestsEqual, keyDigest, presentedKey } from './auth';
import { WsTickets, ticketOf } from './ws-ticket';
import type { AccessConfig, Surface } from './access-config';
import { renderRefusal } from './access-forms';
import type { Form, Refusal } from './access-forms';
import { isV05Body } from './dialect';
import type { SharedLimits } from './shared-limits';

export { accessConfig, AccessConfigError } from './access-config';
export type { AccessConfig, ApiKey, AuthOptions, LegacyTokens, Surface } from './access-config';
export type { Form, Refusal } from './access-forms';

/** Where a request goes: its surface and the form its refusals take ('ask-post': decided by the body). */
export interface Target {
  surface: Surface;
  form: Form | 'ask-post';
}

/**
 * A plugin's access rule: the target of a request to one of its paths, `open` when anyone may
 * send it, undefined when the path is not the plugin's.
 */
export type AccessRule = (method: string, path: string) => Target | 'open' | undefined;

/** Any path no plugin claims is REST's (a 404 tells nothing unasked). */
const FALLBACK: Target = { surface: 'rest', form: 'rest' };

/** What the layer decided for one request or WebSocket upgrade. */
export interface Admission {
  /** The authenticated client, when the surface requires a key. */
  client?: string;
  /** Set when the request is refused. */
  refusal?: Refusal;
  /** RateLimit headers for the answer (also on refusals). */
  headers: Record<string, string>;
  /** Ends this request's place in its client's stream count; call once it is over. */
  release(): void;
}

/** Counts a request against its key's window: @fastify/rate-limit's createRateLimit. */
type Consume = (key: string) => Promise<{ remaining: number; ttlInSeconds: number; exceeded: boolean }>;

interface StoredKey {
  client: string;
  digest: Buffer;
  surfaces?: readonly Surface[] | undefined;
}

const clients = new WeakMap<IncomingMessage, string>();

/** The client a request was admitted as (undefined on an open surface). */
export const clientOf = (req: IncomingMessage): string | undefined => clients.get(req);

const NO_RELEASE = (): void => undefined;

/** A release that counts once, however often it is called (close events may repeat). */
function once(release: () => void): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    release();
  };
}

export class AccessControl {
  private readonly keys: StoredKey[];
  private readonly open = new Map<string, number>();
  private readonly rules: AccessRule[] = [];
  /** Tickets for WebSockets opened without headers (see ws-ticket.ts). */
  readonly tickets: WsTickets;
  /** Told when the shared counters could not be reached (the request is then let through). */
  onSharedFailure: ((err: unknown) => void) | undefined;

  /**
   * `consume`: this gateway's own rate limiter; `shared`: counters every gateway replica on the
   * same NATS uses, for rate limits and stream caps that hold across replicas (preferred).
   */
  constructor(
    readonly config: AccessConfig,
    private readonly consume?: Consume,
    private readonly shared?: SharedLimits,
  ) {
    this.keys = config.keys.map((k) => ({
      client: k.client,
      digest: keyDigest(k.key),
      surfaces: k.surfaces,
    }));
    this.tickets = new WsTickets(this.keys.map((k) => k.digest));
  }

  /** A ticket for the client a request was admitted as, to open a WebSocket of `surface`. */
  issueTicket(req: IncomingMessage, surface: Surface): { ticket: string; expiresIn: number } | undefined {
    const client = clientOf(req);
    return client === undefined ? undefined : this.tickets.issue(client, surface);
  }

  /** Adds a plugin's rule; the first rule that claims a path decides. */
  addRule(rule: AccessRule): void {
    this.rules.push(rule);
  }

  /** The surface of a request, or undefined when it is open to anyone. */
  targetOf(method: string, url: string): Target | undefined {
    if (method === 'OPTIONS') return undefined; // CORS preflights carry no credentials
    const path = url.split('?', 1)[0]!;
    for (const rule of this.rules) {
      const target = rule(method, path);
      if (target !== undefined) return target === 'open' ? undefined : target;
    }
    return FALLBACK;
  }

  /** Whether the surface requires a key: some configured key is valid for it. */
  required(surface: Surface): boolean {
    return this.keys.some((k) => !k.surfaces || k.surfaces.includes(surface));
  }

  /**
   * The client whose key the request presents, compared with every key valid for the surface
   * in constant time (no early exit, equal-length digests).
   */
  private identify(req: IncomingMessage, surface: Surface): string | undefined {
    const given = presentedKey(req);
    if (given === undefined) {
      // A WebSocket upgrade may carry a ticket instead (browsers cannot send headers there).
      const ticket = req.headers.upgrade ? ticketOf(req.url) : undefined;
      return ticket === undefined ? undefined : this.tickets.verify(ticket, surface);
    }
    const digest = keyDigest(given);
    let client: string | undefined;
    for (const k of this.keys) {
      const valid = !k.surfaces || k.surfaces.includes(surface);
      if (digestsEqual(digest, k.digest) && valid) client ??= k.client;
    }
    return client;
  }

  async admit(req: IncomingMessage, surface: Surface, ip: string): Promise<Admission> {
    let client: string | undefined;
    let refusal: Refusal | undefined;
    if (this.required(surface)) {
      client = this.identify(req, surface);
      if (client === undefined) {
        const presented =
          presentedKey(req) !== undefined ||
          (req.headers.upgrade !== undefined && ticketOf(req.url) !== undefined);
        refusal = {
          status: 401,
          code: 'unauthorized',
          message: presented
            ? 'Unauthorized: the API key is not valid for this endpoint'
            : 'Unauthorized: send an API key as Authorization: Bearer <key> or X-API-Key: <key>',
          headers: {
            'www-authenticate': presented
              ? 'Bearer realm="askbus", error="invalid_token"'
              : 'Bearer realm="askbus"',
          },
        };
      } else clients.set(req, client);
    }
    // Refused keys count against their IP's window too, which slows down guessing.
    const rateKey = client !== undefined ? `client:${client}` : `ip:${ip}`;
    const headers: Record<string, string> = {};
    const consume = this.rateCounter();
    if (consume) {
      const max = this.config.ratePerMinute;
      const state = await consume(rateKey);
      Object.assign(headers, {
        'ratelimit-limit': String(max),
        'ratelimit-remaining': String(state.remaining),
        'ratelimit-reset': String(state.ttlInSeconds),
      });
      if (state.exceeded) {
        refusal = {
          status: 429,
          code: 'rate_limited',
          message: `Too many requests: at most ${max} a minute; retry in ${state.ttlInSeconds} s`,
          headers: { 'retry-after': String(state.ttlInSeconds) },
        };
      }
    }
    if (refusal)
      return { ...(client !== undefined ? { client } : {}), refusal, headers, release: NO_RELEASE };
    const release = await this.enter(rateKey);
    if (!release) {
      const cap = this.config.maxStreamsPerClient;
      refusal = {
        status: 429,
        code: 'too_many_streams',
        message: `Too many open requests: at most ${cap} at once; close one first`,
        headers: { 'retry-after': '1' },
      };
      return { ...(client !== undefined ? { client } : {}), refusal, headers, release: NO_RELEASE };
    }
    return { ...(client !== undefined ? { client } : {}), headers, release };
  }

  /** The rate limiter: the replicas' shared counters, else this gateway's own. */
  private rateCounter(): Consume | undefined {
    if (this.config.ratePerMinute <= 0) return undefined;
    const shared = this.shared;
    if (!shared) return this.consume;
    const max = this.config.ratePerMinute;
    return async (key) => {
      try {
        const { count, ttlInSeconds } = await shared.consume(key);
        return { remaining: Math.max(0, max - count), ttlInSeconds, exceeded: count > max };
      } catch (err) {
        // NATS KV out of reach: serve (a limit is a guard, not a reason to refuse everyone).
        this.onSharedFailure?.(err);
        return { remaining: max, ttlInSeconds: 60, exceeded: false };
      }
    };
  }

  /** Takes a place among the key's open streams; undefined when the cap is reached. */
  private async enter(key: string): Promise<(() => void) | undefined> {
    const cap = this.config.maxStreamsPerClient;
    if (cap <= 0) return NO_RELEASE;
    const shared = this.shared;
    if (shared) {
      let entered: boolean;
      try {
        entered = await shared.enter(key, cap);
      } catch (err) {
        this.onSharedFailure?.(err);
        return NO_RELEASE;
      }
      return entered ? once(() => void shared.leave(key).catch(() => undefined)) : undefined;
    }
    const n = this.open.get(key) ?? 0;
    if (n >= cap) return undefined;
    this.open.set(key, n + 1);
    return once(() => {
      const left = (this.open.get(key) ?? 1) - 1;
      if (left > 0) this.open.set(key, left);
      else this.open.delete(key);
    });
  }

  /** Open streams of a client (tests and metrics). */
  openStreams(client: string): number {
    const key = `client:${client}`;
    return (this.open.get(key) ?? 0) + (this.shared?.openHere(key) ?? 0);
  }
}

/** Refusals decided in onRequest but sent once the body tells the dialect (POST /ask). */
const pending = new WeakMap<FastifyRequest, Refusal>();

function parsedBody(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

function bodyForm(body: unknown): Form {
  const b = parsedBody(body);
  return typeof b === 'object' && b !== null && !Array.isArray(b) && isV05Body(b as Record<string, unknown>)
    ? 'v05'
    : 'rest';
}

function send(reply: FastifyReply, form: Form, refusal: Refusal): FastifyReply {
  const { contentType, body } = renderRefusal(form, refusal);
  return reply.code(refusal.status).headers(refusal.headers).type(contentType).send(body);
}

/**
 * Sends the refusal kept for a request whose body was still to be read, if any: from the
 * gateway's error handler, so that an unauthenticated client gets its 401 even when its body
 * is malformed or too large.
 */
export function sendPendingRefusal(req: FastifyRequest, reply: FastifyReply): boolean {
  const refusal = pending.get(req);
  if (!refusal) return false;
  pending.delete(req);
  void send(reply, bodyForm(req.body), refusal);
  return true;
}

/**
 * Builds the access layer from its configuration and adds its hooks to the app; call before
 * any route is registered. The rate limiter is @fastify/rate-limit's store, used through
 * createRateLimit so that refusals keep each protocol's form and WebSocket upgrades count too.
 */
export async function accessLayer(
  app: FastifyInstance,
  config: AccessConfig,
  shared?: SharedLimits,
): Promise<AccessControl> {
  let consume: Consume | undefined;
  if (config.ratePerMinute > 0 && !shared) {
    await app.register(rateLimit, {
      global: false,
      max: config.ratePerMinute,
      timeWindow: 60_000,
      keyGenerator: (req) => (req as unknown as { rateKey: string }).rateKey,
    });
    const limiter = app.createRateLimit();
    consume = async (rateKey) => {
      const r = await limiter({ rateKey, routeOptions: { config: {} } } as unknown as FastifyRequest);
      if (r.isAllowed) return { remaining: config.ratePerMinute, ttlInSeconds: 60, exceeded: false };
      return { remaining: r.remaining, ttlInSeconds: r.ttlInSeconds, exceeded: r.isExceeded };
    };
  }
  const access = new AccessControl(config, consume, shared);
  access.onSharedFailure = (err) =>
    app.log.warn({ err: String(err) }, 'shared rate and stream counts unavailable; request let through');

  app.addHook('onRequest', async (req, reply) => {
    const target = access.targetOf(req.method, req.url);
    if (!target) return;
    const admission = await access.admit(req.raw, target.surface, req.ip);
    if (admission.client !== undefined) {
      // The client's name on the request's log lines ("request completed" among them).
      const log = req.log.child({ client: admission.client });
      req.log = log;
      reply.log = log;
    }
    reply.headers(admission.headers);
    if (admission.refusal) {
      if (target.form !== 'ask-post') return send(reply, target.form, admission.refusal);
      pending.set(req, admission.refusal);
      return;
    }
    reply.raw.once('close', admission.release);
  });

  app.addHook('preValidation', async (req, reply) => {
    if (sendPendingRefusal(req, reply)) return reply;
  });

  return access;
}

/**
 * The access check of a WebSocket upgrade (not a Fastify route): the same admission as a
 * request; the place among the client's streams is held until the socket closes.
 */
export async function admitUpgrade(
  access: AccessControl,
  req: IncomingMessage,
  surface: Surface,
): Promise<Admission> {
  const admission = await access.admit(req, surface, req.socket.remoteAddress ?? '');
  if (!admission.refusal) req.socket.once('close', admission.release);
  return admission;
}
