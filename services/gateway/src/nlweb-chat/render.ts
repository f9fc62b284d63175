/**
 * The router's Message stream as NLWeb's Nov 2025 chat page reads it over /chat/ws and
 * /chat/sse (static/chat-interface-unified.js `handleStreamData` and chat-ui-common.js
 * `processMessageByType`). The page brackets an answer by `begin-nlweb-response` and
 * `end-nlweb-response` (at the end it sorts the results and, when no result/nlws/summary came,
 * replaces whatever text it showed with "No answers were found"). So:
 *
 * - results pass as `result` with a list; the summary (NLWeb's `result` + `@type: Summary`,
 *   which that page would render as an item) goes out as `summary` with `content`;
 * - text the page must keep — the clarifying question, "site is irrelevant", an error, and tool
 *   answers it has no renderer for (compare, substitutions) — goes out as `nlws` (answer + items);
 * - streamed chunks, progress and debug messages are left out: the page appends any unknown
 *   message's text as a new line, and renders an intermediate message's text as items.
 */
import type { Message } from '@askbus/contracts';
import { pageEnsemble, toolTextAnswer } from '../pages/answers';
import type { UserTurn } from '../conversations/index';

export type ChatFrame = Record<string, unknown>;

/** What no chat page renders: streamed pieces, progress and debug messages. */
const DROPPED = new Set([
  'summary_chunk',
  'nlws_chunk',
  'intermediate_message',
  'status',
  'tool_selection',
  'retrieval_count',
  'query',
]);

/** A text answer the page keeps on screen (its `nlws`), with the envelope of `m`. */
function answerFrame(m: Message, answer: string, items: unknown[], extra: ChatFrame = {}): ChatFrame {
  return {
    message_id: m.message_id,
    sender_type: m.sender_type,
    timestamp: m.timestamp,
    conversation_id: m.conversation_id,
    message_type: 'nlws',
    '@type': 'GeneratedAnswer',
    answer,
    items,
    ...extra,
  };
}

/** The chat page's events for one router message ([] for what it must not see). */
export function chatFrames(m: Message): ChatFrame[] {
  if (DROPPED.has(m.message_type)) return [];
  switch (m.message_type) {
    case 'result':
      if (typeof m.content === 'string') {
        const { message_id, sender_type, timestamp, conversation_id, content } = m;
        return [{ message_id, sender_type, timestamp, conversation_id, message_type: 'summary', content }];
      }
      return [m];
    case 'ask_user':
      return [answerFrame(m, m.content, [], { ask_user: true })];
    case 'site_is_irrelevant_to_query':
      return [answerFrame(m, m.content, [], { site_is_irrelevant_to_query: true })];
    case 'error':
      return [answerFrame(m, m.error, [], { error: m.error, code: m.code, status: m.status })];
    case 'ensemble_result': {
      const e = pageEnsemble(m);
      return e ? [e] : [];
    }
    default: {
      const answer = toolTextAnswer(m, false);
      return answer
        ? [answerFrame(m, answer.answer, answer.items, { tool_message_type: m.message_type })]
        : [m];
    }
  }
}

/** A question as the chat page sends and replays it (`message_type: "user"`). */
export function userFrame(conversationId: string, user: UserTurn): ChatFrame {
  return {
    type: 'message',
    message_type: 'user',
    message_id: user.messageId,
    conversation_id: conversationId,
    content: { query: user.query, site: user.site.length === 1 ? user.site[0] : user.site, mode: user.mode },
    timestamp: user.timestamp,
    sender_info: { id: user.senderId, name: user.senderName },
  };
}
