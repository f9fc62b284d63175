/**
 * MCP in the gateway: Streamable HTTP at /mcp (sessions, SSE, resumability), NLWeb's plain
 * JSON-RPC POST at /mcp (one JSON answer, no session), WebSocket at /mcp/ws, and the
 * 2024-11-05 HTTP+SSE transport at /mcp/sse + /mcp/messages (legacy-sse.ts).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { refuseUpgrade, rpcError } from '../http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { context } from '@opentelemetry/api';
import { WebSocketServer } from 'ws';
import type WebSocket from 'ws';
import type { Bus } from '@askbus/bus';
import { SharedSessions } from './shared-sessions';
import { idKey, isAnswer, isRequest } from './shared-event-store';
import type { SharedEventStore } from './shared-event-store';
import { McpInitializeParams } from '@askbus/contracts';
import type { McpSessionRecord } from '@askbus/contracts';
import { OTEL_CONTEXT, createMcpServer } from './server';
import type { McpServerDeps } from './server';
import { WebSocketServerTransport } from './ws-transport';
import { legacySseRoutes } from './legacy-sse';
import { checkBody, requestMethods } from './envelope';
import type { BodyCheck } from './envelope';
import { webRequest, withBatchErrors, writeResponse } from './web-bridge';
import { header } from '../auth';
import { admitUpgrade, clientOf } from '../access';
import { BODY_LIMITS, tooLargeMessage } from '../body-limits';
import type { AccessControl } from '../access';

/** WebSocket sub-protocols the server speaks (the same JSON-RPC frames under both names). */
export const WS_SUBPROTOCOLS = ['mcp', 'mcp-v1'] as const;
export const MCP_PATH = '/mcp';
export const MCP_WS_PATH = '/mcp/ws';

export interface McpOptions {
  /** A key valid for MCP only (default env ASKBUS_MCP_TOKEN); the gateway's access layer checks it. */
  authToken?: string | undefined;
  /** Origins allowed besides none and localhost ('*' allows any); default env ASKBUS_MCP_ORIGINS (comma list). */
  allowedOrigins?: string[];
  /** Time limit of one tool call (ms), default 30 s. */
  callTimeoutMs?: number;
  /** How long an elicitation waits for the user (ms), default 2 min. */
  elicitTimeoutMs?: number;
  /** WebSocket ping interval (ms); a socket that missed the last pong is dropped. Default 30 s. */
  wsPingMs?: number;
  /** Interval of `: keepalive` comments on MCP SSE streams (ms), default 15 s. */
  sseKeepAliveMs?: number;
  /** Streamable HTTP sessions idle this long are closed (ms), default 30 min. */
  sessionIdleMs?: number;
  /** At most this many Streamable HTTP sessions at once (default 1000). */
  maxSessions?: number;
  /** How long a stream resumed on this gateway follows another gateway's request (ms), default 10 min. */
  maxFollowMs?: number;
  /** Largest JSON-RPC message accepted (bytes), default 1 MiB (BODY_LIMITS.mcpBytes). */
  maxMessageBytes?: number;
  /** Deepest JSON nesting of a WebSocket frame (bodies: the gateway's own check), default 64. */
  maxJsonDepth?: number;
}

export interface McpPluginOptions extends McpOptions {
  /** The gateway's access layer: it checks HTTP requests itself; upgrades are checked here. */
  access: AccessControl;
  bus: Bus;
  version: string;
  onQuery?: McpServerDeps['onQuery'];
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  lastSeen: number;
  record: McpSessionRecord & { transport: 'streamable-http' };
  events: SharedEventStore;
  /** Ids of requests this gateway's server sent the client (elicitations) still unanswered. */
  awaiting: Set<string>;
}

/** The messages of a body (one message or a batch). */
const messagesOf = (body: unknown): Record<string, unknown>[] =>
  (Array.isArray(body) ? body : [body]).filter(
    (m): m is Record<string, unknown> => typeof m === 'object' && m !== null && !Array.isArray(m),
  );

/**
 * The SDK transport's open SSE streams. It offers no public way to end a stream it did not
 * open itself (one this gateway replays from another gateway's request), so this reaches its
 * stream map; mcp/shared.test.ts fails if the SDK renames it.
 */
const streamsOf = (t: WebStandardStreamableHTTPServerTransport): Map<string, { cleanup(): void }> =>
  (t as unknown as { _streamMapping: Map<string, { cleanup(): void }> })._streamMapping;

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

const isInitialize = (body: unknown): boolean =>
  typeof body === 'object' &&
  body !== null &&
  !Array.isArray(body) &&
  (body as { method?: unknown }).method === 'initialize';

/** Writes an HTTP refusal on a socket that asked for an upgrade, then closes it. */
/** Refuses an upgrade to /mcp/ws with a JSON-RPC error body. */
const refuse = (socket: Duplex, status: number, message: string, extra: Record<string, string> = {}): void =>
  refuseUpgrade(socket, status, rpcError(status === 401 ? -32001 : -32000, message), extra);

export async function mcpPlugin(app: FastifyInstance, opts: McpPluginOptions): Promise<void> {
  // Every path under /mcp is the MCP surface (its own keys, its refusals in JSON-RPC's form).
  opts.access.addRule((_method, path) =>
    path === MCP_PATH || path.startsWith(`${MCP_PATH}/`) ? { surface: 'mcp', form: 'mcp' } : undefined,
  );
  const allowedOrigins =
    opts.allowedOrigins ??
    (process.env.ASKBUS_MCP_ORIGINS ?? '')
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean);
  const maxBytes = opts.maxMessageBytes ?? BODY_LIMITS.mcpBytes;
  const maxJsonDepth = opts.maxJsonDepth ?? BODY_LIMITS.jsonDepth;
  const wsPingMs = opts.wsPingMs ?? 30_000;
  const sessionIdleMs = opts.sessionIdleMs ?? 30 * 60_000;
  const maxSessions = opts.maxSessions ?? 1_000;
  const deps: McpServerDeps = {
    bus: opts.bus,
    version: opts.version,
    callTimeoutMs: opts.callTimeoutMs ?? 30_000,
    elicitTimeoutMs: opts.elicitTimeoutMs ?? 120_000,
    ...(opts.onQuery ? { onQuery: opts.onQuery } : {}),
  };
  const handles = requestMethods(createMcpServer(deps));
  const sessions = new Map<string, Session>();
  const restoring = new Map<string, Promise<Session | undefined>>();
  const shared = await SharedSessions.open(opts.bus, {
    idleMs: sessionIdleMs,
    ...(opts.maxFollowMs ? { maxFollowMs: opts.maxFollowMs } : {}),
    warn: (msg, fields) => app.log.warn(fields, msg),
  });
  const sockets = new Set<WebSocket>();
  let closing = false;

  function originAllowed(origin: string | undefined): boolean {
    if (origin === undefined || origin === '') return true;
    if (allowedOrigins.includes('*') || allowedOrigins.includes(origin)) return true;
    try {
      return LOCAL_HOSTS.has(new URL(origin).hostname);
    } catch {
      return false;
    }
  }

  /** The Origin check (keys and limits: the access layer); false when the reply has been sent. */
  function guard(req: FastifyRequest, reply: FastifyReply): boolean {
    const origin = header(req.raw, 'origin');
    if (!originAllowed(origin)) {
      void reply
        .code(403)
        .type('application/json')
        .send(rpcError(-32000, `Forbidden: origin ${origin} is not allowed`));
      return false;
    }
    return true;
  }

  /** Hands a request to an SDK transport on the raw Node request and response. */
  async function handOver(
    transport: WebStandardStreamableHTTPServerTransport,
    req: FastifyRequest,
    reply: FastifyReply,
    body?: unknown,
    checked?: BodyCheck & { ok: true },
  ): Promise<void> {
    const raw = reply.raw;
    // The context active now (the HTTP request's span, with OpenTelemetry on) reaches the tool
    // calls of this request as extra.authInfo: the SDK passes req.auth through to them.
    const auth: AuthInfo = {
      token: '',
      clientId: 'askbus-mcp',
      scopes: [],
      extra: { [OTEL_CONTEXT]: context.active() },
    };
    (req.raw as IncomingMessage & { auth?: AuthInfo }).auth = auth;
    reply.hijack();
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) raw.setHeader(k, v);
    raw.setHeader('access-control-expose-headers', 'Mcp-Session-Id, Mcp-Protocol-Version, X-Query-Id');
    try {
      const answer = await transport.handleRequest(webRequest(req.raw), { parsedBody: body, authInfo: auth });
      await writeResponse(checked?.batch ? await withBatchErrors(answer, checked.errors) : answer, raw);
    } catch (err) {
      req.log.error({ err }, 'MCP request failed');
      if (!raw.headersSent) {
        raw.writeHead(500, { 'content-type': 'application/json' });
        raw.end(rpcError(-32603, 'Internal error in the gateway'));
      } else if (!raw.writableEnded) raw.end();
    }
  }

  /**
   * A session's transport and server. A new one records itself for every gateway once its
   * `initialize` has given it an id; a restored one (`restore`: its id and record) takes the id
   * another gateway gave it.
   */
  async function newSession(restore?: { id: string; record: Session['record'] }): Promise<Session> {
    const session = { awaiting: new Set<string>() } as unknown as Session;
    let events: SharedEventStore | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => restore?.id ?? randomUUID(),
      eventStore: {
        // The session's id (and so its shared store) is known once initialize has run.
        storeEvent: (streamId, message) => events!.storeEvent(streamId, message),
        getStreamIdForEventId: (eventId) => events!.getStreamIdForEventId(eventId),
        replayEventsAfter: (lastEventId, send) => events!.replayEventsAfter(lastEventId, send),
      },
      retryInterval: 1_000,
      maxRequestBodySize: maxBytes,
      ...(opts.sseKeepAliveMs ? { keepAliveMs: opts.sseKeepAliveMs } : {}),
      onsessioninitialized: async (id) => {
        events = shared.eventStore(id);
        events.isOpen = (streamId) => streamsOf(transport).has(streamId);
        events.onForeignEnd = (streamId) => streamsOf(transport).get(streamId)?.cleanup();
        events.muted = restore !== undefined;
        session.events = events;
        sessions.set(id, session);
        if (!restore) await shared.put(id, session.record);
      },
      // A DELETE: the session ends for every gateway.
      onsessionclosed: async (id) => {
        sessions.delete(id);
        await shared.remove(id);
      },
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (!id) return;
      session.events?.close();
      // Closed here (idle, shutdown): the record stays, so another gateway can go on with it.
      if (sessions.get(id) === session) sessions.delete(id);
      shared.forget(id);
    };
    // Requests this server sends the client: their answers may reach another gateway.
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      const m = message as Record<string, unknown>;
      if (isRequest(m)) session.awaiting.add(idKey(m.id));
      return send(message, options);
    };
    const server = createMcpServer(deps);
    Object.assign(session, { transport, server, lastSeen: Date.now() });
    if (restore) session.record = restore.record;
    await server.connect(transport);
    return session;
  }

  /**
   * A session another gateway made: a new transport and server take its id, and its client's
   * `initialize` is replayed to them (nothing goes back to the client), so the server knows
   * the client's capabilities (elicitation among them) as the first gateway did.
   */
  async function restoreSession(id: string, record: Session['record']): Promise<Session> {
    const session = await newSession({ id, record });
    const initialize = {
      jsonrpc: '2.0',
      id: `askbus-restore-${randomUUID()}`,
      method: 'initialize',
      params: record.init,
    };
    const answer = await session.transport.handleRequest(
      new Request(`http://gateway${MCP_PATH}`, {
        method: 'POST',
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        body: JSON.stringify(initialize),
      }),
      { parsedBody: initialize },
    );
    await answer.text();
    session.events.muted = false;
    return session;
  }

  /**
   * The session a request names, held here or restored from another gateway's record; undefined
   * when there is none or it belongs to another client (the same 404: no session leaks).
   */
  async function sessionFor(id: string, req: FastifyRequest): Promise<Session | undefined> {
    const client = clientOf(req.raw) ?? null;
    let session = sessions.get(id);
    if (!session) {
      let pending = restoring.get(id);
      if (!pending) {
        pending = (async () => {
          const record = await shared.get(id);
          if (record?.transport !== 'streamable-http' || closing) return undefined;
          return sessions.get(id) ?? restoreSession(id, record);
        })();
        restoring.set(id, pending);
        void pending.finally(() => restoring.delete(id)).catch(() => undefined);
      }
      session = await pending;
    }
    if (!session || session.record.owner !== client) return undefined;
    session.lastSeen = Date.now();
    shared.touch(id, session.record);
    return session;
  }

  // What other gateways tell this one about the sessions it holds.
  const stopEvents = shared.onEvent((id, event) => {
    const session = sessions.get(id);
    if (!session) return;
    if (event.type === 'closed') {
      void session.server.close();
    } else if (event.type === 'replies') {
      for (const m of event.messages) {
        const k = idKey(m.id);
        if (!session.awaiting.delete(k)) continue;
        session.transport.onmessage?.(m as Parameters<NonNullable<typeof session.transport.onmessage>>[0]);
      }
    }
  });

  // Sessions nobody used for a while are closed (their queries are cancelled with them).
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const s of sessions.values()) if (now - s.lastSeen > sessionIdleMs) void s.server.close();
    },
    Math.min(60_000, sessionIdleMs),
  );
  sweep.unref();

  // Bodies arrive as text, so that malformed JSON gets JSON-RPC's -32700 rather than a REST 400.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: maxBytes }, (_req, body, done) =>
    done(null, body),
  );

  app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
    const status = err.statusCode ?? 500;
    if (status >= 500) req.log.error({ err }, 'MCP request failed');
    const code = status === 413 ? -32600 : status < 500 ? -32600 : -32603;
    return reply
      .code(status)
      .type('application/json')
      .send(
        rpcError(
          code,
          status === 413
            ? tooLargeMessage(maxBytes)
            : status < 500
              ? err.message
              : 'Internal error in the gateway',
        ),
      );
  });

  // A ticket to open /mcp/ws where no header can be sent (browsers, the SDK's WebSocket
  // transport): the key goes in this request's header, only the ticket in the WebSocket's URL.
  app.post(`${MCP_PATH}/ws-ticket`, async (req, reply) => {
    const issued = opts.access.issueTicket(req.raw, 'mcp');
    if (!issued)
      return reply
        .code(404)
        .type('application/json')
        .send({ error: 'no API keys are configured: open /mcp/ws directly' });
    return reply.type('application/json').send({
      ticket: issued.ticket,
      expires_in: issued.expiresIn,
      url: `${MCP_WS_PATH}?ticket=${encodeURIComponent(issued.ticket)}`,
    });
  });

  app.post(MCP_PATH, async (req, reply) => {
    if (!guard(req, reply)) return reply;
    const text = typeof req.body === 'string' ? req.body : '';
    if (text.trim() === '') {
      return reply
        .code(400)
        .type('application/json')
        .send(rpcError(-32600, 'Invalid Request: the body is empty'));
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      return reply
        .code(400)
        .type('application/json')
        .send(rpcError(-32700, `Parse error: ${(err as Error).message}`));
    }
    // Valid JSON that is no valid message gets -32600/-32601/-32602 here, not the SDK's -32700.
    const checked = checkBody(body, header(req.raw, 'mcp-protocol-version'), { handles });
    if (!checked.ok) return reply.code(400).type('application/json').send(JSON.stringify(checked.answer));
    body = checked.body;
    const sid = header(req.raw, 'mcp-session-id');
    if (sid) {
      const session = await sessionFor(sid, req);
      if (!session)
        return reply.code(404).type('application/json').send(rpcError(-32001, 'Session not found'));
      const messages = messagesOf(body);
      const answers = messages.filter(isAnswer);
      if (
        answers.length > 0 &&
        answers.length === messages.length &&
        !answers.every((m) => session.awaiting.has(idKey(m.id)))
      ) {
        // The client answers a request another gateway's server sent (an elicitation): it goes there.
        shared.publish(sid, { type: 'replies', messages: answers });
        return reply.code(202).send();
      }
      for (const m of answers) session.awaiting.delete(idKey(m.id));
      session.events.expect(messages.filter(isRequest).map((m) => m.id));
      await handOver(session.transport, req, reply, body, checked);
      return reply;
    }
    const acceptsSse = /\btext\/event-stream\b/i.test(header(req.raw, 'accept') ?? '');
    if (acceptsSse && isInitialize(body)) {
      if (closing)
        return reply
          .code(503)
          .type('application/json')
          .send(rpcError(-32000, 'The gateway is shutting down'));
      if (sessions.size >= maxSessions) {
        return reply
          .code(503)
          .type('application/json')
          .send(rpcError(-32000, 'Too many MCP sessions; try again later'));
      }
      const session = await newSession();
      const init = McpInitializeParams.safeParse((body as { params?: unknown }).params);
      session.record = {
        transport: 'streamable-http',
        owner: clientOf(req.raw) ?? null,
        // An initialize the SDK refuses makes no session; one it takes has these params.
        init: init.success
          ? init.data
          : { protocolVersion: '', capabilities: {}, clientInfo: { name: '', version: '' } },
        created: Date.now(),
      };
      await handOver(session.transport, req, reply, body);
      return reply;
    }
    // No session: NLWeb's plain JSON-RPC POST, answered by a one-request server. A client that
    // does not take SSE gets one JSON body; hanging up cancels what it asked for.
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !acceptsSse,
      maxRequestBodySize: maxBytes,
    });
    const server = createMcpServer(deps);
    await server.connect(transport);
    reply.raw.on('close', () => void server.close());
    if (!acceptsSse) req.raw.headers.accept = 'application/json, text/event-stream';
    if (!/json/i.test(header(req.raw, 'content-type') ?? ''))
      req.raw.headers['content-type'] = 'application/json';
    await handOver(transport, req, reply, body, checked);
    return reply;
  });

  const sessionRoute = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    if (!guard(req, reply)) return reply;
    const sid = header(req.raw, 'mcp-session-id');
    if (!sid) {
      return reply
        .code(req.method === 'GET' ? 405 : 400)
        .header('allow', 'POST')
        .type('application/json')
        .send(
          rpcError(-32000, 'Bad Request: Mcp-Session-Id header is required (initialize with a POST first)'),
        );
    }
    const session = await sessionFor(sid, req);
    if (!session) return reply.code(404).type('application/json').send(rpcError(-32001, 'Session not found'));
    await handOver(session.transport, req, reply);
    return reply;
  };
  app.get(MCP_PATH, sessionRoute);
  app.delete(MCP_PATH, sessionRoute);

  // The 2024-11-05 HTTP+SSE transport at /mcp/sse and /mcp/messages (legacy-sse.ts).
  legacySseRoutes(app, {
    createServer: () => createMcpServer(deps),
    shared,
    guard,
    closing: () => closing,
    maxSessions,
    keepAliveMs: opts.sseKeepAliveMs ?? 15_000,
  });

  // ------------------------------------------------------------------ WebSocket at /mcp/ws

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: maxBytes,
    perMessageDeflate: { threshold: 1_024 },
    // The client's first known sub-protocol (the handshake check below refused none known).
    handleProtocols: (offered) =>
      [...offered].find((p) => (WS_SUBPROTOCOLS as readonly string[]).includes(p)) ?? false,
  });

  function onConnection(ws: WebSocket): void {
    sockets.add(ws);
    const server = createMcpServer(deps);
    let alive = true;
    ws.on('pong', () => (alive = true));
    const ping = setInterval(() => {
      if (!alive) {
        ws.terminate();
        return;
      }
      alive = false;
      ws.ping();
    }, wsPingMs);
    ping.unref();
    ws.on('close', () => {
      clearInterval(ping);
      sockets.delete(ws);
      // Closing the server aborts its running tool calls, which cancels their queries.
      void server.close();
    });
    void server
      .connect(new WebSocketServerTransport(ws, { handles: requestMethods(server) }, maxJsonDepth))
      .catch((err: unknown) => {
        app.log.error({ err }, 'MCP WebSocket failed to start');
        ws.terminate();
      });
  }

  function onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = (req.url ?? '').split('?')[0];
    if (path !== MCP_WS_PATH) {
      // Someone else's upgrade; refuse it only when nobody else listens.
      if (app.server.listenerCount('upgrade') <= 1) refuse(socket, 404, `no WebSocket endpoint at ${path}`);
      return;
    }
    if (closing) return refuse(socket, 503, 'The gateway is shutting down');
    const origin = header(req, 'origin');
    if (!originAllowed(origin)) return refuse(socket, 403, `Forbidden: origin ${origin} is not allowed`);
    const offered = (header(req, 'sec-websocket-protocol') ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    if (offered.length > 0 && !offered.some((p) => (WS_SUBPROTOCOLS as readonly string[]).includes(p))) {
      return refuse(
        socket,
        400,
        `Unsupported WebSocket sub-protocol ${offered.join(', ')}; this server speaks ${WS_SUBPROTOCOLS.join(', ')}`,
      );
    }
    // Keys and limits before the upgrade: a refused client gets its 401 or 429 over HTTP.
    void admitUpgrade(opts.access, req, 'mcp').then(
      ({ refusal, headers }) => {
        if (refusal)
          return refuse(socket, refusal.status, refusal.message, { ...headers, ...refusal.headers });
        if (closing || socket.destroyed) return socket.destroy();
        wss.handleUpgrade(req, socket, head, onConnection);
      },
      (err: unknown) => {
        app.log.error({ err }, 'MCP WebSocket access check failed');
        refuse(socket, 500, 'Internal error in the gateway');
      },
    );
  }

  app.server.on('upgrade', onUpgrade);

  // Connections that have not sent a request yet. Clients (the SDK's among them) reconnect
  // their SSE streams when shutdown ends them; such a connection, and one whose stream ended
  // just now, would hold close() until the client gave up. Shutdown ends them below.
  const unused = new Map<Socket, number>();
  const onTcp = (socket: Socket): void => {
    unused.set(socket, Date.now());
    socket.once('close', () => unused.delete(socket));
  };
  const onRequest = (req: IncomingMessage): void => void unused.delete(req.socket);
  app.server.on('connection', onTcp);
  app.server.on('request', onRequest);

  app.addHook('preClose', async () => {
    closing = true;
    clearInterval(sweep);
    stopEvents();
    app.server.off('upgrade', onUpgrade);
    for (const ws of sockets) ws.close(1001, 'the gateway is shutting down');
    await Promise.all([...sessions.values()].map((s) => s.server.close().catch(() => undefined)));
    sessions.clear();
    shared.close();
    setTimeout(() => {
      for (const ws of sockets) ws.terminate();
    }, 1_000).unref();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
    const sweepConnections = setInterval(() => {
      app.server.closeIdleConnections();
      for (const [socket, since] of unused) if (Date.now() - since > 200) socket.destroy();
    }, 50);
    sweepConnections.unref();
    app.server.once('close', () => {
      clearInterval(sweepConnections);
      app.server.off('connection', onTcp);
      app.server.off('request', onRequest);
    });
  });
}
