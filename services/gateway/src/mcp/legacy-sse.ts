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

export const MCP_SSE_PATH = '/mcp/sse';
export const MCP_MESSAGES_PATH = '/mcp/messages';

export interface LegacySseOptions {
  /** A new MCP server (the same tools as every other transport). */
  createServer: () => Server;
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
}

/** The context of the request's span reaches the tool calls as extra.authInfo (as on /mcp). */
function withAuth(req: FastifyRequest): IncomingMessage & { auth?: AuthInfo } {
  const raw = req.raw as IncomingMessage & { auth?: AuthInfo };
  raw.auth = { token: '', clientId: 'askbus-mcp', scopes: [], extra: { [OTEL_CONTEXT]: context.active() } };
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
    sessions.set(id, { transport, server });
    const keepalive = setInterval(() => {
      if (!raw.writableEnded) raw.write(': keepalive\n\n');
    }, opts.keepAliveMs);
    keepalive.unref();
    const end = (): void => {
      clearInterval(keepalive);
      if (sessions.delete(id)) void server.close();
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
    const session = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (!session) {
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
    // The transport checks the message (a 400 when it is none) and answers 202; the answer to
    // the message itself goes out on the session's stream.
    if (!/json/i.test(String(req.headers['content-type'] ?? '')))
      req.raw.headers['content-type'] = 'application/json';
    reply.hijack();
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) reply.raw.setHeader(k, v);
    await session.transport.handlePostMessage(withAuth(req), reply.raw, body);
    return reply;
  });

  app.addHook('preClose', async () => {
    await Promise.all([...sessions.values()].map((s) => s.server.close().catch(() => undefined)));
    sessions.clear();
  });
}
