/**
 * MCP's HTTP+SSE transport of protocol version 2024-11-05, which older MCP clients (the SDK's
 * SSEClientTransport among them) still use: `GET /mcp/sse` opens an SSE stream whose first
 * event, `endpoint`, names where to POST (`/mcp/messages?sessionId=…`); every answer and
 * notification comes back on the stream. The SDK's SSEServerTransport does the protocol; this
 * module routes it, keeps the sessions and their keep-alives, and closes them on shutdown.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
// Deprecated in favour of Streamable HTTP, which /mcp serves; this is for the clients that are not.
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { context } from '@opentelemetry/api';
import { OTEL_CONTEXT } from './server';
import { rpcError } from '../http';
import { clientOf } from '../access';
import type { SharedSessions } from './shared-sessions';

export const MCP_SSE_PATH = '/mcp/sse';
export const MCP_MESSAGES_PATH = '/mcp/messages';

export interface LegacySseOptions {
  /** A new MCP server (the same tools as every other transport). */
  createServer: () => Server;
  /** Sessions every gateway knows: a POST reaching another gateway is relayed to this one. */
  shared: SharedSessions;
  /** The plugin's Origin check; false when it has answered. */
  guard: (req: FastifyRequest, reply: FastifyReply) => boolean;
  /** Whether the gateway is shutting down. */
  closing: () => boolean;
  /** At most this many SSE sessions at once. */
  maxSessions: number;
  /** Interval of `: keepalive` comments on the streams (ms). */
  keepAliveMs: number;
}

interface SseSession {
  transport: SSEServerTransport;
  server: Server;
  owner: string | null;
}

/** The context of the request's span reaches the tool calls as extra.authInfo (as on /mcp). */
const authInfo = (): AuthInfo => ({
  token: '',
  clientId: 'askbus-mcp',
  scopes: [],
  extra: { [OTEL_CONTEXT]: context.active() },
});
function withAuth(req: FastifyRequest): IncomingMessage & { auth?: AuthInfo } {
  const raw = req.raw as IncomingMessage & { auth?: AuthInfo };
  raw.auth = authInfo();
  return raw;
}

export function legacySseRoutes(app: FastifyInstance, opts: LegacySseOptions): void {
  const sessions = new Map<string, SseSession>();

  app.get(MCP_SSE_PATH, async (req, reply) => {
    if (!opts.guard(req, reply)) return reply;
    if (opts.closing())
      return reply.code(503).type('application/json').send(rpcError(-32000, 'The gateway is shutting down'));
    if (sessions.size >= opts.maxSessions)
      return reply
        .code(503)
        .type('application/json')
        .send(rpcError(-32000, 'Too many MCP sessions; try again later'));
    const raw = reply.raw;
    reply.hijack();
    // CORS and the other headers fastify would have sent, then the transport's own.
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) raw.setHeader(k, v);
    raw.setHeader('x-accel-buffering', 'no');
    const transport = new SSEServerTransport(MCP_MESSAGES_PATH, raw);
    const server = opts.createServer();
    const id = transport.sessionId;
    const owner = clientOf(req.raw) ?? null;
    sessions.set(id, { transport, server, owner });
    await opts.shared.put(id, { transport: 'legacy-sse', owner, created: Date.now() });
    const keepalive = setInterval(() => {
      if (!raw.writableEnded) raw.write(': keepalive\n\n');
    }, opts.keepAliveMs);
    keepalive.unref();
    const end = (): void => {
      clearInterval(keepalive);
      if (sessions.delete(id)) {
        void server.close();
        void opts.shared.remove(id);
      }
    };
    transport.onclose = end;
    // A client that hangs up ends its session; closing the server aborts its running calls.
    raw.on('close', end);
    try {
      await server.connect(transport);
    } catch (err) {
      req.log.error({ err }, 'MCP SSE session failed to start');
      end();
      if (!raw.headersSent) raw.writeHead(500, { 'content-type': 'application/json' });
      if (!raw.writableEnded) raw.end(rpcError(-32603, 'Internal error in the gateway'));
    }
    return reply;
  });

  app.post(MCP_MESSAGES_PATH, async (req, reply) => {
    if (!opts.guard(req, reply)) return reply;
    const sid = (req.query as Record<string, unknown> | undefined)?.sessionId;
    const client = clientOf(req.raw) ?? null;
    const held = typeof sid === 'string' ? sessions.get(sid) : undefined;
    const session = held?.owner === client ? held : undefined;
    // A session whose stream another gateway holds: the message is relayed there.
    const elsewhere = !held && typeof sid === 'string' ? await opts.shared.get(sid) : undefined;
    const relay = elsewhere?.transport === 'legacy-sse' && elsewhere.owner === client;
    if (!session && !relay) {
      const why =
        typeof sid === 'string' ? 'Session not found' : 'Bad Request: the sessionId parameter is required';
      return reply
        .code(typeof sid === 'string' ? 404 : 400)
        .type('application/json')
        .send(rpcError(typeof sid === 'string' ? -32001 : -32000, why));
    }
    let body: unknown;
    try {
      body = JSON.parse(typeof req.body === 'string' ? req.body : '');
    } catch (err) {
      return reply
        .code(400)
        .type('application/json')
        .send(rpcError(-32700, `Parse error: ${(err as Error).message}`));
    }
    if (!session) {
      opts.shared.publish(sid as string, { type: 'legacy-message', message: body });
      return reply.code(202).type('text/plain').send('Accepted');
    }
    // The transport checks the message (a 400 when it is none) and answers 202; the answer to
    // the message itself goes out on the session's stream.
    if (!/json/i.test(String(req.headers['content-type'] ?? '')))
      req.raw.headers['content-type'] = 'application/json';
    reply.hijack();
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) reply.raw.setHeader(k, v);
    await session.transport.handlePostMessage(withAuth(req), reply.raw, body);
    return reply;
  });

  // Messages relayed from other gateways to the sessions whose streams this one holds.
  const stopEvents = opts.shared.onEvent((id, event) => {
    const session = sessions.get(id);
    if (!session || event.type !== 'legacy-message') return;
    session.transport.handleMessage(event.message, { authInfo: authInfo() }).catch((err: unknown) => {
      app.log.warn({ err: String(err), sessionId: id }, 'relayed MCP message refused');
    });
  });

  app.addHook('preClose', async () => {
    stopEvents();
    await Promise.all([...sessions.values()].map((s) => s.server.close().catch(() => undefined)));
    sessions.clear();
  });
}
