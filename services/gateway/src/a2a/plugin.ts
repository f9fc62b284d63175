/**
 * A2A v1.0 in the gateway, on @a2a-js/sdk: the SDK's DefaultRequestHandler does the protocol;
 * its Express handlers (JSON-RPC, HTTP+JSON, the v0.3 compatibility layer, the v0.3 card) run
 * on the raw Node request and response after reply.hijack(). Fastify keeps what it is good at:
 * routing, the body limits (body-limits.ts), CORS, auth, the v1.0 agent card with cache headers.
 *
 *   GET  /.well-known/agent-card.json   the v1.0 card (the v0.3 shape for A2A-Version: 0.3)
 *   POST /a2a                           JSON-RPC (v1.0 names; v0.3 names without A2A-Version)
 *   *    /a2a/rest/...                  HTTP+JSON (/message:send, /tasks/{id}, …, /extendedAgentCard)
 *
 * Tasks and push configs live in NATS JetStream KV, so a restart loses none. Task events go out
 * on NATS too (replicas.ts), so SubscribeToTask and CancelTask work on any gateway replica.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AgentCard } from '@a2a-js/sdk';
import {
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
  UnauthenticatedUser,
} from '@a2a-js/sdk/server';
import type { PushNotificationStore, TaskStore, User } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import { RequestMalformedError, toRestErrorBody } from '@a2a-js/sdk/errors';
import type { Bus } from '@askbus/bus';
import { CARD_PATH, JSONRPC_PATH, REST_PATH, buildCard } from './card';
import { undecodable } from './wire';
import type { CardOptions } from './card';
import { AskExecutor } from './executor';
import type { ExecutorDeps } from './executor';
import { GuardedPushSender, webhookValidator } from './push';
import type { PushOptions } from './push';
import { KvPushStore, KvTaskStore, PUSH_BUCKET, TASKS_BUCKET, openBucket, validating } from './store';
import { ReplicatedEventBusManager } from './replicas';
import type { ReplicaOptions } from './replicas';
import { header } from '../auth';
import { clientOf } from '../access';
import { BODY_LIMITS, tooLargeMessage } from '../body-limits';
import type { AccessControl } from '../access';
import { rpcError } from '../http';

export interface A2aOptions {
  /** Serve A2A (default true). */
  enabled?: boolean;
  /** A key valid for A2A only (else env ASKBUS_A2A_TOKEN); the gateway's access layer checks it. The card stays public. */
  authToken?: string | undefined;
  /** Base URL the card advertises (else the request's protocol and Host). */
  publicUrl?: string;
  /** Serve v0.3 clients through the SDK's compatibility layer (default true). */
  legacy?: boolean;
  /** Time limit of one task's run on the bus (ms), default 60 s. */
  callTimeoutMs?: number;
  /** Largest request body (bytes), default 1 MiB (BODY_LIMITS.a2aBytes). */
  maxBodyBytes?: number;
  /** Interval of `: keepalive` comments on A2A SSE streams (ms), default 15 s. */
  keepAliveMs?: number;
  /** KV buckets of tasks and push configs. */
  tasksBucket?: string;
  pushBucket?: string;
  /** How long tasks are kept (ms), default 7 days. */
  taskTtlMs?: number;
  /** Push notifications (on by default); `allowPrivate` lets webhooks reach private addresses. */
  push?: PushOptions & { enabled?: boolean };
  /** Fail to start when NATS has no JetStream KV (default false: warn and keep tasks in memory). */
  requireDurableStore?: boolean;
  /** Cache-Control max-age of the card (s), default 300. */
  cardMaxAgeSeconds?: number;
  /** Sharing task events with other gateway replicas: heartbeat and cancel waits (ms). */
  replicas?: Pick<ReplicaOptions, 'heartbeatMs' | 'cancelAckMs' | 'cancelWaitMs'>;
}

export interface A2aPluginOptions extends A2aOptions {
  /** The gateway's access layer, which checks every A2A request before this plugin sees it. */
  access: AccessControl;
  bus: Bus;
  version: string;
  onQuery?: ExecutorDeps['onQuery'];
  /** Receives the plugin's internals once built (tests). */
  onReady?: (internals: A2aInternals) => void;
}

export interface A2aInternals {
  handler: DefaultRequestHandler;
  executor: AskExecutor;
  sender: GuardedPushSender;
  eventBuses: ReplicatedEventBusManager;
  taskStore: TaskStore;
}

/** The subset of Express this file uses (express is the SDK's peer; it ships no types here). */
type ExpressApp = ((req: IncomingMessage, res: ServerResponse) => void) & {
  disable(setting: string): void;
  use(...args: unknown[]): void;
};
const express = createRequire(import.meta.url)('express') as () => ExpressApp;

const JSON_TYPE = 'application/json';
const A2A_TYPE = 'application/a2a+json';

/** A caller the access layer admitted with its key: the client's name. */
class ClientUser implements User {
  constructor(private readonly name: string) {}
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return this.name;
  }
}

/** Methods whose body Fastify leaves unread (DELETE and OPTIONS: when they have no content type). */
const BODILESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/** Whether a request announces a body (RFC 9112 §6.3: a Transfer-Encoding or a non-zero length). */
const carriesBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

const mediaType = (req: IncomingMessage): string =>
  (header(req, 'content-type') ?? '').split(';', 1)[0]!.trim().toLowerCase();

function restError(status: number, reason: string, message: string): string {
  const name =
    status === 401
      ? 'UNAUTHENTICATED'
      : status === 404
        ? 'NOT_FOUND'
        : status === 413
          ? 'INVALID_ARGUMENT'
          : 'INVALID_ARGUMENT';
  return JSON.stringify({
    error: {
      code: status,
      status: name,
      message,
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'askbus' }],
    },
  });
}

/** A JSON-RPC id as §4 allows it (and the SDK takes it): a string, an integer or null. */
const validId = (id: unknown): id is string | number | null =>
  id === null || typeof id === 'string' || Number.isInteger(id);

/**
 * Why a parsed JSON-RPC body is not a Request the SDK should see, as the error to answer with
 * (the id echoed only when it is a valid one); undefined when it is one.
 */
function invalidEnvelope(
  body: unknown,
): { id: string | number | null; code: number; message: string } | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const what = Array.isArray(body)
      ? 'batches are not supported'
      : 'the body must be a JSON-RPC request object';
    return { id: null, code: -32600, message: `Invalid Request: ${what}` };
  }
  const b = body as { jsonrpc?: unknown; id?: unknown; method?: unknown };
  const id = b.id !== undefined && validId(b.id) ? b.id : null;
  if (b.jsonrpc !== '2.0') return { id, code: -32600, message: 'Invalid Request: jsonrpc must be "2.0"' };
  if (b.id !== undefined && !validId(b.id))
    return { id: null, code: -32600, message: 'Invalid Request: id must be a string, an integer or null' };
  if (typeof b.method !== 'string')
    return { id, code: -32600, message: 'Invalid Request: method must be a string' };
  if (b.method.trim() === '') return { id, code: -32601, message: 'Method not found' };
  return undefined;
}

const SEND_METHODS = new Set(['SendMessage', 'SendStreamingMessage', 'message/send', 'message/stream']);

/**
 * The message of a send request (either binding), if the body is one, with its parts: v0.3's
 * HTTP+JSON binding (the proto JSON of v0.3's Message) names them `content`, every other form
 * `parts`.
 */
function messageOf(kind: 'jsonrpc' | 'rest', url: string, body: unknown): { parts?: unknown } | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const b = body as { method?: unknown; params?: { message?: unknown }; message?: unknown };
  const m =
    kind === 'jsonrpc'
      ? typeof b.method === 'string' && SEND_METHODS.has(b.method)
        ? b.params?.message
        : undefined
      : /\/message:(send|stream)(\?|$)/.test(url)
        ? b.message
        : undefined;
  if (!m || typeof m !== 'object') return undefined;
  const msg = m as { parts?: unknown; content?: unknown };
  if (kind === 'rest' && msg.parts === undefined && Array.isArray(msg.content)) return { parts: msg.content };
  return msg;
}

export async function a2aPlugin(app: FastifyInstance, opts: A2aPluginOptions): Promise<void> {
  // The agent card is public; /a2a/rest is the HTTP+JSON binding, the rest of /a2a JSON-RPC.
  opts.access.addRule((_method, path) => {
    const under = (prefix: string): boolean => path === prefix || path.startsWith(`${prefix}/`);
    if (path === CARD_PATH) return 'open';
    if (under(REST_PATH)) return { surface: 'a2a', form: 'a2a-rest' };
    if (under(JSONRPC_PATH)) return { surface: 'a2a', form: 'a2a-rpc' };
    return undefined;
  });
  if (opts.enabled === false) return;
  const legacy = opts.legacy ?? true;
  const pushEnabled = opts.push?.enabled ?? true;
  const maxBody = opts.maxBodyBytes ?? BODY_LIMITS.a2aBytes;
  const keepAliveMs = opts.keepAliveMs ?? 15_000;
  const maxAge = opts.cardMaxAgeSeconds ?? 300;
  const cardOpts: CardOptions = {
    version: opts.version,
    auth: opts.access.required('a2a'),
    legacy,
    pushNotifications: pushEnabled,
  };
  const startedAt = new Date();

  const ttl = opts.taskTtlMs ?? 7 * 24 * 3_600_000;
  const validate = webhookValidator(opts.push?.allowPrivate ?? false);
  let taskStore: TaskStore;
  let pushStore: PushNotificationStore;
  try {
    const [tasksKv, pushKv] = await Promise.all([
      openBucket(opts.bus.nc, opts.tasksBucket ?? TASKS_BUCKET, ttl),
      openBucket(opts.bus.nc, opts.pushBucket ?? PUSH_BUCKET, ttl),
    ]);
    taskStore = new KvTaskStore(tasksKv);
    pushStore = new KvPushStore(pushKv, validate);
  } catch (err) {
    // NATS without JetStream: A2A still works, but tasks die with the process.
    if (opts.requireDurableStore) throw err;
    app.log.warn({ err }, 'A2A: no JetStream KV on this NATS; tasks are kept in memory and lost on restart');
    taskStore = new InMemoryTaskStore();
    pushStore = validating(new InMemoryPushNotificationStore(), validate);
  }
  const sender = new GuardedPushSender(pushStore, opts.push);
  const executor = new AskExecutor({
    bus: opts.bus,
    callTimeoutMs: opts.callTimeoutMs ?? 60_000,
    ...(opts.onQuery ? { onQuery: opts.onQuery } : {}),
  });

  // The base URL of the request being served, for the cards' interface URLs.
  const baseUrl = new AsyncLocalStorage<string>();
  const baseOf = (req: FastifyRequest): string => {
    if (opts.publicUrl) return opts.publicUrl.replace(/\/+$/, '');
    // Fastify's protocol and host honour X-Forwarded-* only when trustProxy is set.
    return `${req.protocol}://${req.host}`;
  };
  const currentBase = (): string => baseUrl.getStore() ?? opts.publicUrl ?? 'http://localhost';
  // Aborted when the client of the request being served goes away (ends its relays).
  const requestSignal = new AsyncLocalStorage<AbortSignal>();

  const eventBuses = new ReplicatedEventBusManager({
    ...opts.replicas,
    bus: opts.bus,
    taskStore,
    cancelLocal: (taskId, eventBus) => executor.cancelTask(taskId, eventBus),
    requestSignal: () => requestSignal.getStore(),
    warn: (msg, fields) => app.log.warn(fields, msg),
  });

  const handler = new DefaultRequestHandler(
    buildCard(opts.publicUrl ?? 'http://localhost', cardOpts),
    taskStore,
    executor,
    eventBuses,
    pushEnabled ? pushStore : undefined,
    pushEnabled ? sender : undefined,
    cardOpts.auth ? async () => buildCard(currentBase(), cardOpts, true) : undefined,
    undefined,
    // Parts in a media type the card does not list are refused (ContentTypeNotSupportedError).
    { validateInputModes: true },
  );
  opts.onReady?.({ handler, executor, sender, eventBuses, taskStore });

  const userBuilder = async (req: IncomingMessage): Promise<User> => {
    const client = clientOf(req);
    return client !== undefined ? new ClientUser(client) : new UnauthenticatedUser();
  };
  const legacyCompat = { enabled: legacy };

  const ex = express();
  ex.disable('x-powered-by');
  ex.use(REST_PATH, restHandler({ requestHandler: handler, userBuilder, legacyCompat }));
  // A REST path no route took ends here: under /a2a, the JSON-RPC handler would answer it.
  ex.use(REST_PATH, (req: IncomingMessage & { originalUrl?: string }, res: ServerResponse) => {
    res.writeHead(404, { 'content-type': A2A_TYPE });
    res.end(restError(404, 'NOT_FOUND', `no A2A route for ${req.method} ${req.originalUrl ?? req.url}`));
  });
  ex.use(JSONRPC_PATH, jsonRpcHandler({ requestHandler: handler, userBuilder, legacyCompat }));
  ex.use(
    CARD_PATH,
    agentCardHandler({
      agentCardProvider: async () => buildCard(currentBase(), cardOpts),
      cache: { maxAge },
      legacyCompat,
    }),
  );
  ex.use((req: IncomingMessage, res: ServerResponse) => {
    const rest = (req.url ?? '').startsWith(REST_PATH);
    res.writeHead(404, { 'content-type': rest ? A2A_TYPE : JSON_TYPE });
    res.end(
      rest
        ? restError(404, 'NOT_FOUND', `no A2A route for ${req.method} ${req.url}`)
        : rpcError(-32601, 'Method not found'),
    );
  });
  ex.use((err: Error & { status?: unknown }, req: IncomingMessage, res: ServerResponse, _next: unknown) => {
    // A body the SDK's own reader refused (too large, unreadable) is the client's fault: a 4xx.
    const status = typeof err.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 0;
    if (status && !res.headersSent) {
      const rest = (req.url ?? '').startsWith(REST_PATH) || res.getHeader('content-type') === A2A_TYPE;
      res.writeHead(status, { 'content-type': rest ? A2A_TYPE : JSON_TYPE });
      res.end(rest ? restError(status, 'BAD_REQUEST', err.message) : rpcError(-32600, err.message));
      return;
    }
    app.log.error({ err }, 'A2A request failed');
    if (res.headersSent) {
      res.end();
      return;
    }
    res.writeHead(500, { 'content-type': JSON_TYPE });
    res.end(rpcError(-32603, 'Internal error in the gateway'));
  });

  const open = new Set<ServerResponse>();
  let closing = false;

  /** Hands the request to the SDK's Express handlers on the raw request and response. */
  async function handOver(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const raw = reply.raw;
    reply.hijack();
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) raw.setHeader(k, v);
    open.add(raw);
    const gone = new AbortController();
    raw.once('close', () => gone.abort());
    const keepalive = setInterval(() => {
      const type = String(raw.getHeader('content-type') ?? '');
      if (raw.headersSent && type.startsWith('text/event-stream') && !raw.writableEnded)
        raw.write(': keepalive\n\n');
    }, keepAliveMs);
    try {
      await new Promise<void>((resolve) => {
        raw.once('close', resolve);
        raw.once('finish', resolve);
        baseUrl.run(baseOf(req), () => requestSignal.run(gone.signal, () => ex(req.raw, raw)));
      });
    } finally {
      clearInterval(keepalive);
      open.delete(raw);
    }
  }

  /**
   * Everything before the SDK (keys and limits were checked by the access layer): the
   * A2A-Version query parameter (§3.6.1), and the body (already read by fastify within the
   * limit) parsed for the SDK's body parser to skip.
   */
  function prepare(req: FastifyRequest, reply: FastifyReply, kind: 'jsonrpc' | 'rest'): boolean {
    const rawReq = req.raw as IncomingMessage & { body?: unknown };
    if (closing) {
      void reply
        .code(503)
        .type(kind === 'rest' ? A2A_TYPE : JSON_TYPE)
        .send(
          kind === 'rest'
            ? restError(503, 'UNAVAILABLE', 'the gateway is shutting down')
            : rpcError(-32603, 'The gateway is shutting down'),
        );
      return false;
    }
    const q = (req.query as Record<string, unknown> | undefined)?.['A2A-Version'];
    if (rawReq.headers['a2a-version'] === undefined && typeof q === 'string')
      rawReq.headers['a2a-version'] = q;
    // Fastify reads no body of a GET (nor of a DELETE without a content type); the SDK would,
    // unbounded by the limits here. A2A's GETs and DELETEs take none: one that has a body is refused.
    if (req.body === undefined && BODILESS.has(req.method) && carriesBody(rawReq)) {
      const text = `a ${req.method} request takes no body`;
      void reply
        .code(400)
        .header('connection', 'close')
        .type(kind === 'rest' ? A2A_TYPE : JSON_TYPE)
        .send(
          kind === 'rest'
            ? JSON.stringify(toRestErrorBody(new RequestMalformedError(text), 400))
            : rpcError(-32600, `Invalid Request: ${text}`),
        );
      rawReq.resume();
      return false;
    }
    const body = req.body;
    if (!Buffer.isBuffer(body) || body.length === 0) return true;
    const type = mediaType(rawReq);
    const json = type === '' || type === JSON_TYPE || (kind === 'rest' && type === A2A_TYPE);
    if (!json) return true; // the SDK's content-type guard answers
    try {
      rawReq.body = JSON.parse(body.toString('utf8'));
    } catch (err) {
      if (kind === 'jsonrpc') {
        void reply
          .code(200)
          .type(JSON_TYPE)
          .send(rpcError(-32700, `Parse error: ${(err as Error).message}`));
      } else {
        void reply
          .code(400)
          .type(A2A_TYPE)
          .send(JSON.stringify(toRestErrorBody(new RequestMalformedError('Invalid JSON payload.'), 400)));
      }
      return false;
    }
    // JSON-RPC 2.0 §5.1: a body that is not a Request object is an Invalid Request (-32600), an
    // empty method name is not found (-32601); the SDK answered both with -32602 and echoed ids
    // of any type. A2A has no batches, so an array is an Invalid Request too.
    if (kind === 'jsonrpc') {
      const invalid = invalidEnvelope(rawReq.body);
      if (invalid) {
        void reply
          .code(200)
          .type(JSON_TYPE)
          .send(
            JSON.stringify({
              jsonrpc: '2.0',
              id: invalid.id,
              error: { code: invalid.code, message: invalid.message },
            }),
          );
        return false;
      }
      // params MAY be omitted (§4); the SDK checks them before the method and answered an
      // unknown method without params with -32602 instead of -32601.
      const req = rawReq.body as { params?: unknown };
      if (req.params === undefined) req.params = {};
    }
    // Message.parts is REQUIRED with at least one part (§4.1.4); the SDK lets an empty list in.
    // Bodies the SDK's decoding would throw on (a 500 or -32603) are the client's fault too.
    const msg = messageOf(kind, req.url, rawReq.body);
    const fault =
      msg && (!Array.isArray(msg.parts) || msg.parts.length === 0)
        ? 'message.parts must hold at least one part'
        : undecodable(kind, rawReq.body, msg);
    if (fault) {
      const text = fault;
      if (kind === 'jsonrpc') {
        const id = (rawReq.body as { id?: unknown }).id ?? null;
        void reply
          .code(200)
          .type(JSON_TYPE)
          .send(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32602, message: text } }));
      } else {
        void reply
          .code(400)
          .type(A2A_TYPE)
          .send(JSON.stringify(toRestErrorBody(new RequestMalformedError(text), 400)));
      }
      return false;
    }
    return true;
  }

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBody }, (_req, body, done) =>
    done(null, body),
  );

  app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
    const status = err.statusCode ?? 500;
    if (status >= 500) req.log.error({ err }, 'A2A request failed');
    const rest = req.url.startsWith(REST_PATH);
    const message =
      status === 413
        ? tooLargeMessage(maxBody)
        : status < 500
          ? err.message
          : 'Internal error in the gateway';
    return reply
      .code(status)
      .type(rest ? A2A_TYPE : JSON_TYPE)
      .send(
        rest
          ? restError(status, status === 413 ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST', message)
          : rpcError(status < 500 ? -32600 : -32603, message),
      );
  });

  app.get(CARD_PATH, async (req, reply) => {
    const version = header(req.raw, 'a2a-version');
    // Without A2A-Version the v1.0 card: it declares the 0.3 interfaces too, which the v0.3
    // clients of @a2a-js/sdk read; `A2A-Version: 0.3` still gets the v0.3 card's shape.
    if (legacy && version === '0.3') {
      await handOver(req, reply);
      return reply;
    }
    const body = JSON.stringify(AgentCard.toJSON(buildCard(baseOf(req), cardOpts)));
    const etag = `W/"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
    reply
      .header('etag', etag)
      .header('cache-control', `public, max-age=${maxAge}`)
      .header('last-modified', startedAt.toUTCString())
      .header('vary', 'A2A-Version');
    if (header(req.raw, 'if-none-match') === etag) return reply.code(304).send();
    return reply.type(JSON_TYPE).send(body);
  });

  const rpcRoute = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    if (!prepare(req, reply, 'jsonrpc')) return reply;
    await handOver(req, reply);
    return reply;
  };
  app.post(JSONRPC_PATH, rpcRoute);
  app.post(`${JSONRPC_PATH}/`, rpcRoute);

  // PUT and PATCH too, and the bare base path, so that the binding, not the gateway's 404, answers.
  const restRoute = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    if (!prepare(req, reply, 'rest')) return reply;
    await handOver(req, reply);
    return reply;
  };
  for (const url of [REST_PATH, `${REST_PATH}/*`])
    app.route({ method: ['GET', 'POST', 'DELETE', 'PUT', 'PATCH'], url, handler: restRoute });

  app.addHook('preClose', async () => {
    closing = true;
    executor.stopAll();
    eventBuses.close();
    sender.close();
    for (const res of open) if (!res.writableEnded) res.end();
  });
}
