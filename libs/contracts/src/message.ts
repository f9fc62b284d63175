import { z } from 'zod';
import { ResultItem, SchemaObject } from './item';

export const SenderType = z.enum(['user', 'assistant', 'system']);
export type SenderType = z.infer<typeof SenderType>;

/** NLWeb's message types (core/schemas.py plus the ad-hoc ones its handlers send). */
export const MessageType = z.enum([
  'begin-nlweb-response',
  'end-nlweb-response',
  'query',
  'result',
  'nlws',
  'status',
  'intermediate_message',
  'error',
  'item_details',
  'compare_items',
  'ensemble_result',
  'substitution_suggestions',
  'results_map',
  'decontextualized_query',
  'no_results',
  'ask_user',
  'site_is_irrelevant_to_query',
  'tool_selection',
  'retrieval_count',
  'summary_chunk',
  'nlws_chunk',
]);
export type MessageType = z.infer<typeof MessageType>;

/** Fields every message carries; NLWeb puts per-type payload at top level or under `content`. */
const envelope = {
  message_id: z.string(),
  sender_type: SenderType,
  timestamp: z.string(),
  conversation_id: z.string(),
};

export const BeginMessage = z.object({
  ...envelope,
  message_type: z.literal('begin-nlweb-response'),
  query: z.string(),
});
export const EndMessage = z.object({
  ...envelope,
  message_type: z.literal('end-nlweb-response'),
  error: z.boolean().optional(),
});
export const ResultMessage = z.object({
  ...envelope,
  message_type: z.literal('result'),
  content: z.array(ResultItem),
});
export const SummaryMessage = z.object({
  ...envelope,
  message_type: z.literal('result'),
  '@type': z.literal('Summary'),
  content: z.string(),
});
export const NlwsMessage = z.object({
  ...envelope,
  message_type: z.literal('nlws'),
  '@type': z.literal('GeneratedAnswer'),
  answer: z.string(),
  items: z.array(ResultItem),
});
/**
 * A piece of a summary or generated answer as the model writes it (askbus's addition; NLWeb
 * sends only the whole). `content` is the text delta; the complete `result`/Summary or `nlws`
 * message follows the last chunk.
 */
export const AnswerChunkMessage = z.object({
  ...envelope,
  message_type: z.enum(['summary_chunk', 'nlws_chunk']),
  content: z.string(),
});
export const ErrorMessage = z.object({
  ...envelope,
  message_type: z.literal('error'),
  error: z.string(),
  code: z.string(),
  status: z.number().int().optional(),
});
export const TextMessage = z.object({
  ...envelope,
  message_type: z.enum([
    'intermediate_message',
    'status',
    'no_results',
    'ask_user',
    'site_is_irrelevant_to_query',
  ]),
  content: z.string(),
});
export const DecontextualizedQueryMessage = z.object({
  ...envelope,
  message_type: z.literal('decontextualized_query'),
  decontextualized_query: z.string(),
  original_query: z.string(),
});
export const ResultsMapMessage = z.object({
  ...envelope,
  message_type: z.literal('results_map'),
  '@type': z.literal('LocationMap'),
  locations: z.array(z.object({ title: z.string(), address: z.string() })),
});
/** Tool answers (details, compare, ensemble, …): their payload shapes belong to the tools. */
export const ToolMessage = z
  .object({
    ...envelope,
    message_type: z.enum([
      'item_details',
      'compare_items',
      'ensemble_result',
      'substitution_suggestions',
      'tool_selection',
      'retrieval_count',
      'query',
    ]),
    schema_object: SchemaObject.optional(),
  })
  .catchall(z.unknown());

export const Message = z.union([
  BeginMessage,
  EndMessage,
  SummaryMessage,
  ResultMessage,
  NlwsMessage,
  AnswerChunkMessage,
  ErrorMessage,
  TextMessage,
  DecontextualizedQueryMessage,
  ResultsMapMessage,
  ToolMessage,
]);
export type Message = z.infer<typeof Message>;
export type BeginMessage = z.infer<typeof BeginMessage>;
export type EndMessage = z.infer<typeof EndMessage>;
export type ResultMessage = z.infer<typeof ResultMessage>;
export type ErrorMessage = z.infer<typeof ErrorMessage>;

type Envelope = 'message_id' | 'sender_type' | 'timestamp' | 'conversation_id';
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type MessageBody = DistributiveOmit<Message, Envelope> & { sender_type?: SenderType };

/** Stamps a message body with NLWeb's envelope: id, sender, ISO timestamp, conversation. */
export function createMessageFactory(conversationId: string, queryId: string) {
  let counter = 0;
  return (body: MessageBody): Message =>
    ({
      sender_type: 'assistant',
      ...body,
      message_id: `${queryId}#${counter++}`,
      timestamp: new Date().toISOString(),
      conversation_id: conversationId,
    }) as Message;
}
