/**
 * What clients of NLWeb's chat API send (/chat/ws frames, /chat/sse's `message` parameter), as
 * NLWeb's Nov 2025 page builds it (chat-interface-unified.js `createUserMessage`, `join`):
 *
 *   {type: "message", message_type: "user", message_id, conversation_id, timestamp,
 *    content: {query, site, mode, prev_queries: [{query, user_id, timestamp}], …URL params},
 *    sender_info: {id, name}}
 *   {type: "join", conversation_id, user_id?, user_name?}   {type: "leave", conversation_id}
 *   {type: "sites_request"}   {type: "ping"}
 *
 * A question becomes the one AskRequest through the /ask parameter rules (dialect.ts), so it is
 * validated exactly as /ask validates it.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { AskRequest } from '@askbus/contracts';
import { parseAsk } from '../dialect';
import { BadRequestError } from '../errors';
import { BODY_LIMITS, JsonTooDeepError } from '../body-limits';
import { jsonNestingExceeds } from '../json-nesting';
import { userTurn } from '../conversations/index';
import type { UserTurn } from '../conversations/index';

/** An error as the chat API sends it: `{type: "error", error, message}`. */
export class ChatProtocolError extends Error {
  constructor(
    readonly error: string,
    message: string,
    readonly code = 400,
  ) {
    super(message);
    this.name = 'ChatProtocolError';
  }
  frame(): Record<string, unknown> {
    return { type: 'error', error: this.error, message: this.message, code: this.code };
  }
}

const Id = z.union([z.string().max(200), z.number().int().transform(String)]);

const SenderInfo = z.looseObject({
  id: z.string().max(200).optional().catch(undefined),
  name: z.string().max(200).optional().catch(undefined),
});

const ChatMessage = z.object({
  type: z.literal('message').optional(),
  message_id: Id.optional(),
  conversation_id: Id.optional(),
  content: z.union([z.string(), z.record(z.string(), z.unknown())], {
    error: 'content must be the question, or {"query": "...", "site": "...", "mode": "..."}',
  }),
  sender_info: SenderInfo.optional().catch(undefined),
});

const Join = z.object({
  type: z.literal('join'),
  conversation_id: Id.refine((s) => s.trim() !== '', 'conversation_id is required'),
  user_id: z.string().max(200).optional().catch(undefined),
});

const Leave = z.object({ type: z.literal('leave'), conversation_id: Id });

export type ClientFrame =
  | { type: 'message'; message: ChatQuestion }
  | { type: 'join'; conversationId: string; userId?: string }
  | { type: 'leave'; conversationId: string }
  | { type: 'sites_request' }
  | { type: 'ping' };

/** A question of the chat API, ready to ask. */
export interface ChatQuestion {
  request: AskRequest;
  user: UserTurn;
  /** The client sent no conversation id: one was made (announce it: `conversation_created`). */
  created: boolean;
}

/** NLWeb's `prev_queries` to query texts: strings, `{query: "…"}` or `{query: {query: "…"}}`. */
function prevTexts(v: unknown): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.flatMap((x): string[] => {
    if (typeof x === 'string') return [x];
    if (x && typeof x === 'object' && 'query' in x) {
      const q = (x as { query: unknown }).query;
      if (typeof q === 'string') return [q];
      if (q && typeof q === 'object' && typeof (q as { query?: unknown }).query === 'string')
        return [(q as { query: string }).query];
    }
    return [];
  });
}

/** The /ask parameters a chat question may carry in `content` (the page adds its URL's). */
const ASK_KEYS = ['query', 'site', 'mode', 'generate_mode', 'max_results', 'min_score', 'tool'] as const;

const issueText = (err: z.ZodError): string => {
  const i = err.issues[0];
  const path = i?.path.join('.');
  return path ? `${path}: ${i?.message ?? 'invalid'}` : (i?.message ?? 'invalid message');
};

/** A `message` frame (or /chat/sse's `message`) as the question it asks. */
export function parseQuestion(raw: unknown): ChatQuestion {
  const parsed = ChatMessage.safeParse(raw);
  if (!parsed.success) throw new ChatProtocolError('invalid_message', issueText(parsed.error));
  const m = parsed.data;
  const content = typeof m.content === 'string' ? { query: m.content } : m.content;
  const given = m.conversation_id?.trim() ?? '';
  const conversationId = given || `conv_${randomUUID().replaceAll('-', '')}`;
  const bag: Record<string, unknown> = { conversation_id: conversationId };
  for (const k of ASK_KEYS) if (content[k] !== undefined) bag[k] = content[k];
  const prev = prevTexts(content.prev_queries);
  if (prev !== undefined && prev.length > 0) bag.prev = prev;
  let request: AskRequest;
  try {
    request = parseAsk({ query: bag, body: undefined }).request;
  } catch (err) {
    if (err instanceof BadRequestError) throw new ChatProtocolError('invalid_message', err.message);
    throw err;
  }
  const senderId = m.sender_info?.id ?? '';
  const user: UserTurn = {
    ...userTurn(request.query, request.site, request.mode, senderId),
    senderName: m.sender_info?.name ?? senderId,
    ...(m.message_id ? { messageId: m.message_id } : {}),
  };
  return { request, user, created: given === '' };
}

/** One WebSocket frame from a client. */
export function parseClientFrame(text: string): ClientFrame {
  // H2: refused before JSON.parse, which blocks the event loop on a frame of a million `[`.
  if (jsonNestingExceeds(text, BODY_LIMITS.jsonDepth))
    throw new ChatProtocolError(
      'invalid_json',
      new JsonTooDeepError(BODY_LIMITS.jsonDepth, { frame: true }).message,
    );
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ChatProtocolError('invalid_json', 'Invalid JSON format');
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new ChatProtocolError('invalid_message', 'a frame is a JSON object with a "type"');
  const type = (raw as { type?: unknown }).type;
  switch (type) {
    case 'message':
      return { type, message: parseQuestion(raw) };
    case 'join': {
      const j = Join.safeParse(raw);
      if (!j.success) throw new ChatProtocolError('invalid_message', issueText(j.error));
      return {
        type,
        conversationId: j.data.conversation_id,
        ...(j.data.user_id ? { userId: j.data.user_id } : {}),
      };
    }
    case 'leave': {
      const l = Leave.safeParse(raw);
      if (!l.success) throw new ChatProtocolError('invalid_message', issueText(l.error));
      return { type, conversationId: l.data.conversation_id };
    }
    case 'sites_request':
    case 'ping':
      return { type };
    default:
      throw new ChatProtocolError(
        'unknown_type',
        `unknown frame type ${JSON.stringify(type)}; this server takes message, join, leave, sites_request, ping`,
      );
  }
}
