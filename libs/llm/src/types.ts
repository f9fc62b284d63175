import type { z } from 'zod';
import type { ResultItem, StoredItem } from '@askbus/contracts';
import type { RoutingTask } from './tasks';

/** Model tier: NLWeb's `level` (low for ranking, high for synthesis). */
export type Tier = 'low' | 'high';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * What a call is for, in structured form. Remote models only read `messages`; the local
 * provider reads the task instead (it scores and composes, it does not pretend to chat).
 */
export type LlmTask =
  | {
      kind: 'rank';
      query: string;
      items: StoredItem[];
      /** answer `{results:[…]}` keyed by index */ batch?: boolean;
    }
  | { kind: 'summarize'; query: string; items: ResultItem[] }
  | { kind: 'generate'; query: string; items: ResultItem[] }
  | RoutingTask;

export interface CallOptions {
  messages: ChatMessage[];
  tier: Tier;
  signal?: AbortSignal;
  maxTokens?: number;
  task?: LlmTask;
}

export interface CompleteOptions<S extends z.ZodType | undefined = undefined> extends CallOptions {
  /** When given, the answer must be JSON this schema accepts; `complete` returns it parsed. */
  jsonSchema?: S;
  /** Name of the schema in `response_format` (letters, digits, _ and -). */
  schemaName?: string;
}

export interface Usage {
  tokensIn: number;
  tokensOut: number;
}

/** One request as an adapter sees it: the wrapper has resolved the schema and the signal. */
export interface AdapterRequest {
  messages: ChatMessage[];
  tier: Tier;
  maxTokens: number;
  signal: AbortSignal;
  json?: { name: string; schema: Record<string, unknown> };
  task?: LlmTask;
}

/** A provider's raw transport; retries, limits, timeouts and parsing are the wrapper's. */
export interface LlmAdapter {
  readonly name: string;
  complete(req: AdapterRequest): Promise<{ text: string; usage?: Usage }>;
  stream(req: AdapterRequest): AsyncIterable<{ delta?: string; usage?: Usage }>;
}

/** Counters of one provider, for logs, metrics and benchmarks. */
export interface LlmCounters {
  calls: number;
  failures: number;
  malformedOutputs: number;
  retries: number;
  tokensIn: number;
  tokensOut: number;
}
