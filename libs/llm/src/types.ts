import type { z } from 'zod';
import type { ResultItem, StoredItem } from '@askbus/contracts';
import type { DefinedTask, RoutingTask } from './tasks';

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
      /** What the ranker has of each item (no site: a ranker is not told it). */
      items: Pick<StoredItem, 'url' | 'name' | '@type' | 'schema_object'>[];
      /** answer `{results:[…]}` keyed by index */ batch?: boolean;
    }
  | { kind: 'summarize'; query: string; items: ResultItem[]; answered?: AnsweredQuestion }
  | { kind: 'generate'; query: string; items: ResultItem[]; answered?: AnsweredQuestion }
  | RoutingTask
  | DefinedTask;

/**
 * What a question was understood to ask, for a summary or an answer to state: the noun for the
 * items ("cars"), the constraints they satisfy ("with 8 cylinders", "from 1970–1973"), the
 * superlative they were sorted by ("the heaviest"), and how many items satisfied it.
 */
export interface AnsweredQuestion {
  noun: string;
  constraints: string[];
  sort?: string;
  matched?: number;
}

export interface CallOptions {
  messages: ChatMessage[];
  tier: Tier;
  signal?: AbortSignal;
  maxTokens?: number;
  task?: LlmTask;
  /**
   * The query this call serves: its retries come out of the query's retry budget
   * (ASKBUS_LLM_RETRY_BUDGET). Without it a call has its own ASKBUS_LLM_RETRIES.
   */
  queryId?: string;
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
  /** The model a tier calls (the circuit breakers are per provider + model). */
  modelFor?(tier: Tier): string;
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
  /** Calls refused at once because the model's circuit breaker was open. */
  refusedOpen: number;
  /** Retries not made because the query's retry budget was spent. */
  retriesDenied: number;
}
