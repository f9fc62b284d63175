/**
 * The gateway: askbus's only HTTP surface. It turns each REST dialect of /ask into one
 * AskRequest on the bus (contracts.ask) and renders the router's Message stream back.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
} from 'fastify';
import cors from '@fastify/cors';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import type { Registry } from 'prom-client';
import type { Bus } from '@askbus/bus';
import { contracts } from '@askbus/contracts';
import { parseForm } from './dialect';
import { RETRIEVER, traceparentFrom } from './ask/runner';
import { BadRequestError, failureOf } from './errors';
import { rememberUnparsableJson, unparsableJsonOf } from './json-body';
import {
  BODY_LIMITS,
  checkFormNesting,
  isJsonTooDeep,
  limitJsonNesting,
  refusedBodyHeadOf,
  tooLargeMessage,
} from './body-limits';
import { clientErrorHandler } from './client-errors';
import { V05BadRequestError } from './v05';
import { looksLikeV05Json } from './v05-detect';
import { restPlugin } from './rest/plugin';
import type { Running } from './rest/pump';
import { chatRoutes } from './chat/index';
import { chatApiRoutes } from './nlweb-chat/routes';
import { mcpPlugin } from './mcp/index';
import type { McpOptions } from './mcp/index';
import { a2aPlugin } from './a2a/index';
import { REST_PATH } from './a2a/card';
import { RequestMalformedError, toRestErrorBody } from '@a2a-js/sdk/errors';
import type { A2aOptions } from './a2a/index';
import { accessConfig, accessLayer, sendPendingRefusal } from './access';
import { SharedLimits } from './shared-limits';
import { conversationTurns } from './conversations/index';
import type { AuthOptions } from './access';

export { parseAsk, parseForm, flattenV055, parseV05, parseWho, isV05Body } from './dialect';
export type { AskCall, AskInput, Dialect, WhoCall } from './dialect';
export { V05Collector, V05Stream, V05BadRequestError, itemResource, v05Failure } from './v05';
export type { V05Response, V05FailureBody, V05Meta, Content as V05Content } from './v05';
export { rankSites } from './ask/who';
export type { WhoQuery } from './ask/who';
export type { WhoSite as SiteRank } from '@askbus/contracts';
export { BadRequestError, failureOf, httpStatusOf } from './errors';
export type { BadRequestBody, Failure } from './errors';
export { JsonCollector, SseRenderer, SSE_HEADERS, sseFrame, resultItems, v055Meta } from './render';
export { AccessConfigError, accessConfig } from './access';
export type { AuthOptions } from './access';

/**
 * The gateway's listen backlog: a burst of connections (a thousand streams opened at once) beyond
 * Node's default 511 is dropped by the kernel and retried by clients only after 1, 3, 7 s. The
 * kernel caps it at net.core.somaxconn.
 */
export const LISTEN_BACKLOG = 4_096;

export interface GatewayOptions {
  /**
   * The gateways whose rate limits and stream caps count together: by default every gateway on
   * the same NATS (the replicas of one deployment); tests give independent gateways their own.
   */
  limitsScope?: string;
  /** Interval of `: keepalive` comments on SSE responses (ms). */
  keepAliveMs?: number;
  /** Time limit of one /ask call on the bus (ms). */
  askTimeoutMs?: number;
  /** Fastify logger: false (default), true, or pino options. */
  logger?: boolean | object;
  /**
   * Which proxies' X-Forwarded-For/-Proto/-Host to believe (Fastify's trustProxy): behind an
   * ingress, its addresses (`10.0.0.0/8`), a hop count, or true. Without it every client behind
   * the ingress has the ingress's address, and so shares one rate limit.
   */
  trustProxy?: FastifyServerOptions['trustProxy'];
  /** Reported by /health and the home page; defaults to this package's version. */
  version?: string;
  /** On close, how long running answers may still finish before they are cut off (ms). */
  shutdownGraceMs?: number;
  /** Prometheus registry served at /metrics (askbus up: every service's bus in one process). */
  metrics?: Registry;
  /**
   * API keys every public surface then requires (else env ASKBUS_API_KEYS / ASKBUS_API_KEYS_FILE),
   * the per-client rate limit and stream cap (else ASKBUS_RATE_LIMIT_PER_MINUTE /
   * ASKBUS_MAX_STREAMS_PER_CLIENT). See access.ts.
   */
  auth?: AuthOptions;
  /** A key valid for MCP only (else env ASKBUS_MCP_TOKEN). */
  mcpAuthToken?: string;
  /** MCP at /mcp and /mcp/ws: origins, time limits, keep-alives. */
  mcp?: McpOptions;
  /** A2A at /a2a (JSON-RPC), /a2a/rest (HTTP+JSON) and /.well-known/agent-card.json. */
  a2a?: A2aOptions;
  /** Largest body of REST /ask, /who and the chat API (bytes), default 1 MiB (body-limits.ts). */
  maxBodyBytes?: number;
  /** Deepest nesting of any JSON a client sends, on every surface; default 64 (body-limits.ts). */
  maxJsonDepth?: number;
}

const READY_TIMEOUT_MS = 2_000;
const SITES_TIMEOUT_MS = 10_000;

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/**
 * The trace a request's bus calls join. With OpenTelemetry on, @fastify/otel made a span for the
 * request (itself a child of an incoming traceparent) and the bus takes it as parent: undefined.
 * Without it, the incoming W3C traceparent when it is valid, else a new trace.
 */
function traceparentOf(req: FastifyRequest): string | undefined {
  return traceparentFrom(req.headers.traceparent);
}

export async function buildGateway(bus: Bus, opts: GatewayOptions = {}): Promise<FastifyInstance> {
  const keepAliveMs = opts.keepAliveMs ?? 15_000;
  const askTimeoutMs = opts.askTimeoutMs ?? 60_000;
  const shutdownGraceMs = opts.shutdownGraceMs ?? 10_000;
  const version = opts.version ?? packageVersion();
  const startedAt = Date.now();
  const running = new Set<Running>();
  // Read first: a bad access configuration stops the start before anything listens.
  const access = accessConfig(opts.auth, {
    mcp: opts.mcpAuthToken ?? opts.mcp?.authToken ?? (process.env.ASKBUS_MCP_TOKEN || undefined),
    a2a: opts.a2a?.authToken ?? (process.env.ASKBUS_A2A_TOKEN || undefined),
  });

  const maxBodyBytes = opts.maxBodyBytes ?? BODY_LIMITS.restBytes;
  const maxJsonDepth = opts.maxJsonDepth ?? BODY_LIMITS.jsonDepth;
  const app = Fastify({
    logger: (opts.logger ?? false) as FastifyServerOptions['logger'],
    ...(opts.trustProxy === undefined ? {} : { trustProxy: opts.trustProxy }),
    bodyLimit: maxBodyBytes,
    // A request Node's parser refuses (a control character in a header, a broken request line)
    // is answered in the error form of the surface it was sent to, not Node's bare 400.
    clientErrorHandler,
    // A path that is no valid percent-encoding fails before any route (FST_ERR_BAD_URL): the A2A
    // REST binding answers it in its own error form, every other surface in NLWeb's.
    frameworkErrors: (err, req, reply: FastifyReply) => {
      const a2aRest = req.url.startsWith(`${REST_PATH}/`);
      void reply
        .code(400)
        .type(a2aRest ? 'application/a2a+json' : 'application/json')
        .send(
          a2aRest
            ? toRestErrorBody(new RequestMalformedError(err.message), 400)
            : new BadRequestError('request', err.message).toBody(),
        );
    },
  });
  // A span per HTTP request; a no-op unless an OpenTelemetry SDK is registered (libs/telemetry).
  await app.register(new FastifyOtelInstrumentation().plugin());

  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
    exposedHeaders: [
      'X-Query-Id',
      'WWW-Authenticate',
      'Retry-After',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
    ],
    // A bare OPTIONS (no Origin / Access-Control-Request-Method) gets a 204, not the plugin's
    // text/plain 400 "Invalid Preflight Request": every 4xx of the gateway is JSON.
    strictPreflight: false,
  });
  // Before every route, so that no surface is registered without them.
  // Limits count on every replica at once when NATS has JetStream KV (else on this one alone).
  const limitsShared =
    access.ratePerMinute > 0 || access.maxStreamsPerClient > 0
      ? await SharedLimits.open(bus, opts.limitsScope)
      : undefined;
  if (limitsShared) app.addHook('onClose', async () => limitsShared.close());
  const accessControl = await accessLayer(app, access, limitsShared);
  // Probes are open to anyone.
  accessControl.addRule((_method, path) => (path === '/health' || path === '/ready' ? 'open' : undefined));
  limitJsonNesting(app, maxJsonDepth);
  const turns = conversationTurns(bus, (err, msg) => app.log.warn({ err }, msg));

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    const form = parseForm(String(body));
    try {
      checkFormNesting(form, maxJsonDepth);
    } catch (err) {
      done(err as Error, undefined);
      return;
    }
    done(null, form);
  });
  // Anything else (text/plain and friends) arrives as text; the dialect accepts JSON in it.
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  // H5: a broken JSON body is remembered, so that a 0.5 client's gets a 0.5 failure (below).
  rememberUnparsableJson(app);

  app.setErrorHandler((err: FastifyError | BadRequestError, req, reply) => {
    if (reply.sent || reply.raw.headersSent) return;
    if (sendPendingRefusal(req, reply)) return reply;
    if (err instanceof BadRequestError) return reply.code(400).send(err.responseBody());
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const code = 'code' in err ? err.code : '';
      const error =
        status === 413
          ? tooLargeMessage(maxBodyBytes)
          : code === 'FST_ERR_CTP_INVALID_JSON_BODY'
            ? `the request body is not valid JSON (${err.message})`
            : code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
              ? 'the request body is empty but its content-type is application/json'
              : err.message;
      const field = isJsonTooDeep(err)
        ? err.parameter
        : code.startsWith('FST_ERR_CTP') || status === 413
          ? 'body'
          : 'request';
      const broken = unparsableJsonOf(req) ?? refusedBodyHeadOf(req);
      if (broken !== undefined && req.url.split('?', 1)[0] === '/ask' && looksLikeV05Json(broken)) {
        return reply
          .code(status === 413 ? 413 : 400)
          .send(new V05BadRequestError(field, error).responseBody());
      }
      const body = new BadRequestError(field, error).toBody();
      return reply.code(status === 413 ? 413 : 400).send(body);
    }
    req.log.error({ err }, 'request failed');
    return reply
      .code(500)
      .send({ message_type: 'error', error: 'internal error in the gateway', code: 'internal', status: 500 });
  });

  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send({
      message_type: 'error',
      error: `no route for ${req.method} ${req.url.split('?')[0]}`,
      code: 'not_found',
      status: 404,
    }),
  );

  // Close waits for running answers (new requests already get 503), then cuts them off.
  app.addHook('preClose', async () => {
    const all = (): Promise<unknown> => Promise.all([...running].map((r) => r.done));
    const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());
    if (running.size === 0) return;
    const finished = await Promise.race([all().then(() => true), sleep(shutdownGraceMs).then(() => false)]);
    if (finished) return;
    for (const r of running) r.stop();
    await Promise.race([all(), sleep(1_000)]);
  });

  const metrics = opts.metrics;
  if (metrics) {
    app.get('/metrics', async (_req, reply) => reply.type(metrics.contentType).send(await metrics.metrics()));
  }

  app.get('/health', async () => ({
    status: 'healthy',
    timestamp: new Date().toISOString(),
    uptime_seconds: Math.floor((Date.now() - startedAt) / 1000),
    version,
  }));

  app.get('/ready', async (_req, reply) => {
    const checks = { nats: bus.connected && !bus.nc.isDraining(), retriever: false };
    let error: string | undefined;
    if (checks.nats) {
      try {
        await bus.request(contracts.sites, {}, { timeoutMs: READY_TIMEOUT_MS });
        checks.retriever = true;
      } catch (err) {
        error = failureOf(err, RETRIEVER).error;
      }
    } else error = 'the NATS connection is down';
    if (checks.nats && checks.retriever) return { status: 'ready', checks };
    const failing = Object.entries(checks)
      .filter(([, ok]) => !ok)
      .map(([name]) => name);
    return reply.code(503).send({ status: 'not_ready', checks, failing, error });
  });

  await app.register(restPlugin, {
    bus,
    access: accessControl,
    turns,
    running,
    askTimeoutMs,
    keepAliveMs,
    sitesTimeoutMs: SITES_TIMEOUT_MS,
  });
  // Before the chat page, whose open paths under /chat/ leave the API's to it.
  await app.register(chatApiRoutes, {
    bus,
    access: accessControl,
    turns,
    traceparentOf,
    askTimeoutMs,
    keepAliveMs,
  });
  await app.register(chatRoutes, { version, access: accessControl });
  await app.register(mcpPlugin, { maxJsonDepth, ...opts.mcp, access: accessControl, bus, version });
  await app.register(a2aPlugin, { ...opts.a2a, access: accessControl, bus, version });

  return app;
}
