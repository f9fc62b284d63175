/**
 * NLWeb's conversation API, as its Nov 2025 page uses it:
 *
 * - `/chat/ws` (WebSocket, the page's default): `connected` on open; each `message` is acked
 *   (`message_ack`), its sender joins the conversation, the other participants get the question
 *   (`message_type: "user"`), and everyone in it gets the answer (begin … end-nlweb-response);
 *   `join` replays the stored conversation, then `end-conversation-history`; `leave`,
 *   `sites_request` (`sites_response`), `ping` (`pong`). Questions of one socket run in turn.
 * - `/chat/sse?message=<the same message as JSON>`: `message_ack`, then the answer, then the
 *   stream ends.
 * - `GET /chat/conversations/:id` (a conversation and its messages) and
 *   `GET /chat/my-conversations` (the caller's conversations), from the same store.
 *
 * Answers come from the router's one Message stream (answer.ts, render.ts); conversations are
 * the durable store every surface shares (../conversations), scoped by API-key client.
 */
import { randomInt } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { WebSocketServer } from 'ws';
import type WebSocket from 'ws';
import { z } from 'zod';
import { newTraceparent } from '@askbus/bus';
import type { Bus } from '@askbus/bus';
import { contracts } from '@askbus/contracts';
import { admitUpgrade, clientOf } from '../access';
import type { AccessControl } from '../access';
import { pendingHeaders, refuseUpgrade, writer } from '../http';
import { KEEPALIVE, SSE_HEADERS, sseFrame } from '../render';
import { conversationsFor } from '../conversations/index';
import type { ConversationTurns } from '../conversations/index';
import { MCP_WS_PATH } from '../mcp/plugin';
import { GenerateHold } from '../pages/generate-hold';
import { answerQuestion } from './answer';
import { ChatProtocolError, parseClientFrame, parseQuestion } from './protocol';
import type { ChatQuestion } from './protocol';
import { chatFrames, userFrame } from './render';
import type { ChatFrame } from './render';

export const CHAT_WS_PATH = '/chat/ws';
export const CHAT_SSE_PATH = '/chat/sse';

export interface ChatApiOptions {
  bus: Bus;
  access: AccessControl;
  turns: ConversationTurns;
  traceparentOf(req: FastifyRequest): string | undefined;
  /** Time limit of one question on the bus (ms). */
  askTimeoutMs: number;
  /** Interval of SSE keep-alive comments (ms). */
  keepAliveMs: number;
  /** WebSocket ping interval; a socket that missed one pong is closed (ms). */
  wsPingMs?: number;
  /** Largest WebSocket frame accepted (bytes). */
  maxFrameBytes?: number;
}

/** Questions one socket may have waiting (NLWeb answers more with `queue_full`). */
const MAX_QUEUED = 10;
const SITES_TIMEOUT_MS = 10_000;

/** The conversation scope of a request: its API-key client, '' when keys are off. */
const scopeOf = (req: IncomingMessage): string => clientOf(req) ?? '';

/** Refuses an upgrade to /chat/ws with the chat API's error frame as the body. */
const refuse = (socket: Duplex, status: number, error: string, message: string, extra = {}): void =>
  refuseUpgrade(socket, status, JSON.stringify({ type: 'error', error, message, code: status }), extra);

const ListQuery = z.object({
  user_id: z.string().max(200).optional(),
  limit: z.coerce.number({ error: 'limit must be a number' }).int().min(1).max(100).default(20),
  offset: z.coerce.number({ error: 'offset must be a number' }).int().min(0).default(0),
});

/** NLWeb's conversation API under /chat/: the REST surface (the page's files beside it are open). */
const CHAT_API = /^\/chat\/(ws|sse|my-conversations|conversations\/.*)$/;

export async function chatApiRoutes(app: FastifyInstance, opts: ChatApiOptions): Promise<void> {
  opts.access.addRule((_method, path) =>
    CHAT_API.test(path) ? { surface: 'rest', form: 'rest' } : undefined,
  );
  const { bus, turns } = opts;
  const store = conversationsFor(bus);
  const deps = { bus, turns, timeoutMs: opts.askTimeoutMs };
  /** Running answers and open sockets, stopped when the gateway closes. */
  const running = new Set<AbortController>();
  const sockets = new Set<WebSocket>();
  /** Sockets in each conversation (this gateway's), by scope and id. */
  const rooms = new Map<string, Set<WebSocket>>();
  const roomKey = (scope: string, id: string): string => `${scope}\u0000${id}`;
  let closing = false;

  const send = (ws: WebSocket, frame: ChatFrame): void => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
  };
  const enter = (key: string, ws: WebSocket): void => {
    const room = rooms.get(key) ?? new Set<WebSocket>();
    room.add(ws);
    rooms.set(key, room);
  };
  const leave = (key: string, ws: WebSocket): void => {
    const room = rooms.get(key);
    room?.delete(ws);
    if (room?.size === 0) rooms.delete(key);
  };

  async function siteNames(): Promise<string[]> {
    try {
      const { sites } = await bus.request(contracts.sites, {}, { timeoutMs: SITES_TIMEOUT_MS });
      return sites.map((s) => s.name);
    } catch {
      return ['all']; // NLWeb answers its fallback list too
    }
  }

  /** The stored conversation as the frames the page replays: each question, then its answer. */
  async function historyFrames(scope: string, id: string, skipUser?: string): Promise<ChatFrame[]> {
    const history = await (await store).history(scope, id);
    return (history?.turns ?? []).flatMap((t) => {
      const hold = new GenerateHold(t.user.mode);
      return [
        ...(skipUser !== undefined && t.user.senderId === skipUser ? [] : [userFrame(id, t.user)]),
        ...t.messages.flatMap((m) => hold.pass(m)).flatMap(chatFrames),
      ];
    });
  }

  function runQuestion(
    scope: string,
    question: ChatQuestion,
    traceparent: string | undefined,
    emit: (f: ChatFrame) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    const controller = new AbortController();
    const stop = (): void => controller.abort();
    signal?.addEventListener('abort', stop, { once: true });
    running.add(controller);
    return answerQuestion(deps, { scope, question, traceparent, signal: controller.signal, emit }).finally(
      () => {
        signal?.removeEventListener('abort', stop);
        running.delete(controller);
      },
    );
  }

  // ---- /chat/ws ------------------------------------------------------------------------------

  const wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxFrameBytes ?? 1024 * 1024 });
  const pingMs = opts.wsPingMs ?? 30_000;

  function onConnection(ws: WebSocket, req: IncomingMessage): void {
    sockets.add(ws);
    const scope = scopeOf(req);
    const participantId = `anon_${randomInt(1000, 10_000)}`;
    const joined = new Set<string>();
    const gone = new AbortController();
    let queue = Promise.resolve();
    let waiting = 0;
    let alive = true;
    ws.on('pong', () => (alive = true));
    // A frame over maxPayload or a broken one: ws closes the socket (1009, 1002) and says why here.
    ws.on('error', (err) => app.log.debug({ err }, 'chat WebSocket error'));
    const ping = setInterval(() => {
      if (!alive) return void ws.terminate();
      alive = false;
      ws.ping();
    }, pingMs);
    ping.unref();

    const broadcast = (key: string, frame: ChatFrame, except?: WebSocket): void => {
      for (const peer of rooms.get(key) ?? [ws]) if (peer !== except) send(peer, frame);
    };

    function ask(q: ChatQuestion): void {
      if (waiting >= MAX_QUEUED) {
        send(ws, {
          type: 'error',
          error: 'queue_full',
          message: 'Conversation queue is full. Please wait.',
          code: 429,
        });
        return;
      }
      const id = q.request.conversationId;
      const key = roomKey(scope, id);
      if (q.created) send(ws, { type: 'conversation_created', conversation_id: id });
      send(ws, { type: 'message_ack', message_id: q.user.messageId });
      joined.add(key);
      enter(key, ws);
      broadcast(key, userFrame(id, q.user), ws);
      waiting++;
      queue = queue
        .then(() => {
          if (gone.signal.aborted) return;
          return runQuestion(scope, q, newTraceparent(), (f) => broadcast(key, f), gone.signal);
        })
        .catch((err: unknown) => app.log.error({ err }, 'chat question failed'))
        .finally(() => void waiting--);
    }

    async function join(id: string, userId: string | undefined): Promise<void> {
      const key = roomKey(scope, id);
      joined.add(key);
      enter(key, ws);
      const frames = await historyFrames(scope, id, userId);
      for (const f of frames) send(ws, f);
      send(ws, {
        type: 'end-conversation-history',
        conversation_id: id,
        message_count: frames.length,
        timestamp: Date.now(),
      });
    }

    ws.on('message', (data, isBinary) => {
      let frame;
      try {
        if (isBinary) throw new ChatProtocolError('invalid_message', 'frames are JSON text, not binary');
        frame = parseClientFrame(data.toString());
      } catch (err) {
        if (err instanceof ChatProtocolError) return send(ws, err.frame());
        app.log.error({ err }, 'chat frame failed');
        return send(ws, {
          type: 'error',
          error: 'processing_error',
          message: 'Internal error in the gateway',
          code: 500,
        });
      }
      switch (frame.type) {
        case 'ping':
          return send(ws, { type: 'pong' });
        case 'sites_request':
          return void siteNames().then((sites) => send(ws, { type: 'sites_response', sites }));
        case 'leave': {
          const key = roomKey(scope, frame.conversationId);
          joined.delete(key);
          return leave(key, ws);
        }
        case 'join':
          return void join(frame.conversationId, frame.userId).catch((err: unknown) => {
            app.log.warn({ err }, 'chat history could not be read');
            send(ws, {
              type: 'error',
              error: 'history_unavailable',
              message: 'The conversation history could not be read',
              code: 503,
            });
          });
        case 'message':
          return ask(frame.message);
      }
    });
    ws.on('close', () => {
      clearInterval(ping);
      gone.abort();
      for (const key of joined) leave(key, ws);
      sockets.delete(ws);
    });
    send(ws, { type: 'connected', participant_id: participantId });
  }

  function onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = (req.url ?? '').split('?')[0];
    if (path !== CHAT_WS_PATH) {
      // MCP's WebSocket answers its own path; any other path is nobody's.
      if (path !== MCP_WS_PATH) refuse(socket, 404, 'not_found', `no WebSocket endpoint at ${path}`);
      return;
    }
    if (closing) return refuse(socket, 503, 'unavailable', 'The gateway is shutting down');
    // Keys and limits before the upgrade, as for /ask: a refused client gets its 401 or 429.
    void admitUpgrade(opts.access, req, 'rest').then(
      ({ refusal, headers }) => {
        if (refusal)
          return refuse(socket, refusal.status, refusal.code, refusal.message, {
            ...headers,
            ...refusal.headers,
          });
        if (closing || socket.destroyed) return socket.destroy();
        wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, req));
      },
      (err: unknown) => {
        app.log.error({ err }, 'chat WebSocket access check failed');
        refuse(socket, 500, 'internal', 'Internal error in the gateway');
      },
    );
  }
  app.server.on('upgrade', onUpgrade);

  app.get(CHAT_WS_PATH, async (_req, reply) =>
    reply
      .code(426)
      .header('upgrade', 'websocket')
      .send({
        type: 'error',
        error: 'upgrade_required',
        message: `${CHAT_WS_PATH} is a WebSocket endpoint`,
        code: 426,
      }),
  );

  // ---- /chat/sse -----------------------------------------------------------------------------

  app.get(CHAT_SSE_PATH, async (req, reply) => {
    const param = (req.query as Record<string, unknown>).message;
    const text = Array.isArray(param) ? param[0] : param;
    let question: ChatQuestion;
    try {
      if (typeof text !== 'string' || text.trim() === '')
        throw new ChatProtocolError(
          'invalid_message',
          'message parameter is required: the chat message as JSON',
        );
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch {
        throw new ChatProtocolError('invalid_json', 'the message parameter is not valid JSON');
      }
      question = parseQuestion(raw);
    } catch (err) {
      if (err instanceof ChatProtocolError) return reply.code(err.code).send(err.frame());
      throw err;
    }
    const raw = reply.raw;
    const write = writer(raw);
    raw.on('error', (err) => req.log.debug({ err }, 'chat SSE response failed'));
    reply.hijack();
    raw.writeHead(200, { ...pendingHeaders(reply), ...SSE_HEADERS });
    raw.flushHeaders();
    const gone = new AbortController();
    const onClose = (): void => gone.abort();
    raw.on('close', onClose);
    const keepalive = setInterval(() => void write(KEEPALIVE), opts.keepAliveMs);
    try {
      if (question.created)
        await write(
          sseFrame({ type: 'conversation_created', conversation_id: question.request.conversationId }),
        );
      await write(sseFrame({ type: 'message_ack', message_id: question.user.messageId }));
      // Frames are written in order; a slow client holds the answer back (writer waits for drain).
      let pending = Promise.resolve();
      await runQuestion(
        scopeOf(req.raw),
        question,
        opts.traceparentOf(req),
        (f) => void (pending = pending.then(() => write(sseFrame(f)))),
        gone.signal,
      );
      await pending;
    } finally {
      clearInterval(keepalive);
      raw.off('close', onClose);
      if (!raw.destroyed && !raw.writableEnded) raw.end();
    }
    return reply;
  });

  // ---- conversations -------------------------------------------------------------------------

  app.get<{ Params: { id: string } }>('/chat/conversations/:id', async (req, reply) => {
    const scope = scopeOf(req.raw);
    const id = req.params.id;
    if (id.length > 200)
      return reply.code(400).send({
        type: 'error',
        error: 'invalid_parameter',
        message: 'a conversation id has at most 200 characters',
        code: 400,
      });
    const history = await (await store).history(scope, id);
    if (!history)
      return reply
        .code(404)
        .send({ type: 'error', error: 'not_found', message: 'Conversation not found', code: 404 });
    const messages = await historyFrames(scope, id);
    const { meta } = history;
    return {
      id: meta.id,
      title: meta.title,
      sites: meta.site,
      mode: meta.mode,
      participants: meta.participants.map((p) => ({ participantId: p, displayName: p, type: 'human' })),
      messages,
      created_at: meta.created_at,
      updated_at: meta.updated_at,
      participant_count: meta.participants.length,
      message_count: messages.length,
    };
  });

  app.get('/chat/my-conversations', async (req, reply) => {
    const q = ListQuery.safeParse(req.query);
    if (!q.success) {
      const message = q.error.issues[0]?.message ?? 'invalid parameters';
      return reply.code(400).send({ type: 'error', error: 'invalid_parameter', message, code: 400 });
    }
    const client = clientOf(req.raw);
    // Without API keys nobody is known: only a participant's own list is given out.
    if (client === undefined && q.data.user_id === undefined) {
      return reply.code(400).send({
        type: 'error',
        error: 'invalid_parameter',
        message: 'user_id is required (the sender_info.id of your messages) unless an API key names you',
        code: 400,
      });
    }
    const all = await (await store).list(client ?? '', q.data.user_id);
    const page = all.slice(q.data.offset, q.data.offset + q.data.limit);
    return {
      conversations: page.map((m) => ({
        conversation_id: m.id,
        title: m.title,
        site: m.site,
        mode: m.mode,
        created_at: m.created_at,
        last_message_at: m.updated_at,
        participant_count: m.participants.length,
      })),
      total: all.length,
      limit: q.data.limit,
      offset: q.data.offset,
    };
  });

  app.addHook('preClose', async () => {
    closing = true;
    app.server.off('upgrade', onUpgrade);
    for (const c of running) c.abort();
    for (const ws of sockets) ws.close(1001, 'the gateway is shutting down');
    setTimeout(() => {
      for (const ws of sockets) ws.terminate();
    }, 1_000).unref();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
}
