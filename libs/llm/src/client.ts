import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import pLimit, { type LimitFunction } from 'p-limit';
import type { z } from 'zod';
import { defaultBreakerSettings, ModelBreaker, type BreakerSettings, type BreakerState } from './breaker';
import { LlmError } from './errors';
import { jsonSchemaOf, parseAnswer } from './json';
import { RetryBudgets } from './retry-budget';
import type {
  AdapterRequest,
  CallOptions,
  CompleteOptions,
  LlmAdapter,
  LlmCounters,
  Tier,
  Usage,
} from './types';

export interface LlmOptions {
  /** Calls in flight at once for this provider (p-limit). */
  concurrency?: number;
  /** Limit of one attempt, in ms. */
  timeoutMs?: number;
  /** Further attempts of one call after a 429, a 5xx, a timeout or a lost connection. */
  maxRetries?: number;
  /**
   * Retries one query may make in all, over every call that names it (`queryId`), so a query
   * of 50 calls on a failing model makes at most this many retries, not 50 × maxRetries.
   */
  retryBudget?: number;
  /** The circuit breaker of each model (consecutive failures that open it, cool-down). */
  breaker?: BreakerSettings;
  /** First backoff; doubles per attempt, with full jitter. */
  backoffMs?: number;
  maxTokens?: number;
  log?: (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
}

/** Answers given by the local scorer or composer instead of the model, by task and reason. */
export interface FallbackCount {
  task: string;
  reason: string;
  count: number;
}

type Answer<S> = S extends z.ZodType ? z.infer<S> : string;

const tracer = trace.getTracer('@askbus/llm');

/**
 * A language model behind one interface, whatever the provider: per-attempt timeout, retries
 * with exponential backoff and jitter on 429/5xx/timeouts (never on other 4xx) within the
 * query's retry budget, a circuit breaker per model, a concurrency limit, and answers parsed by
 * zod. A malformed answer is an LlmError for that call, logged and counted, never a silent drop;
 * callers that must not fail fall back to the local answer (see fallback.ts), counted here.
 */
export class Llm {
  readonly counters: LlmCounters = {
    calls: 0,
    failures: 0,
    malformedOutputs: 0,
    retries: 0,
    tokensIn: 0,
    tokensOut: 0,
    refusedOpen: 0,
    retriesDenied: 0,
  };
  private readonly limit: LimitFunction;
  private readonly budgets: RetryBudgets;
  private readonly breakerSettings: BreakerSettings;
  private readonly breakers = new Map<string, ModelBreaker>();
  private readonly fallbacks = new Map<string, FallbackCount>();
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly backoffMs: number;
  private readonly maxTokens: number;

  constructor(
    readonly adapter: LlmAdapter,
    private readonly opts: LlmOptions = {},
  ) {
    this.limit = pLimit(Math.max(1, opts.concurrency ?? 8));
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.maxRetries = opts.maxRetries ?? 2;
    this.backoffMs = opts.backoffMs ?? 250;
    this.maxTokens = opts.maxTokens ?? 1024;
    this.budgets = new RetryBudgets(opts.retryBudget ?? 4);
    this.breakerSettings = opts.breaker ?? defaultBreakerSettings;
  }

  /** Counts answers the local scorer or composer gave instead of the model (`n` of them). */
  recordFallback(task: string, reason: string, n = 1): void {
    const key = `${task}\u0000${reason}`;
    const entry = this.fallbacks.get(key);
    if (entry) entry.count += n;
    else this.fallbacks.set(key, { task, reason, count: n });
  }

  fallbackCounts(): FallbackCount[] {
    return [...this.fallbacks.values()].map((f) => ({ ...f }));
  }

  /** The state of the circuit breaker of each model called so far. */
  breakerStates(): { model: string; state: BreakerState }[] {
    return [...this.breakers.values()].map((b) => ({ model: b.model, state: b.state }));
  }

  /** Retries `queryId` has left in this process. */
  retriesLeft(queryId: string): number {
    return this.budgets.remaining(queryId);
  }

  private breakerFor(tier: Tier): ModelBreaker {
    const model = this.adapter.modelFor?.(tier) ?? tier;
    let breaker = this.breakers.get(model);
    if (!breaker) {
      breaker = new ModelBreaker(model, this.breakerSettings, (state) =>
        this.opts.log?.('warn', `llm circuit ${state === 'half_open' ? 'half-open' : state}`, {
          provider: this.provider,
          model,
          state,
        }),
      );
      this.breakers.set(model, breaker);
    }
    return breaker;
  }

  get provider(): string {
    return this.adapter.name;
  }

  /** Calls waiting for a slot of the concurrency limit, and running. */
  get load(): { active: number; pending: number } {
    return { active: this.limit.activeCount, pending: this.limit.pendingCount };
  }

  /** One answer: text, or JSON parsed by `jsonSchema`. */
  async complete<S extends z.ZodType | undefined = undefined>(opts: CompleteOptions<S>): Promise<Answer<S>> {
    this.counters.calls++;
    const json = opts.jsonSchema
      ? { name: opts.schemaName ?? 'answer', schema: jsonSchemaOf(opts.jsonSchema) }
      : undefined;
    const span = this.startSpan(opts);
    let failure: LlmError | undefined;
    try {
      return await this.withRetries(opts, async (req) => {
        const { text, usage } = await this.adapter.complete({ ...req, json });
        this.count(usage, span);
        if (!opts.jsonSchema) return text as Answer<S>;
        try {
          return parseAnswer(opts.jsonSchema, text) as Answer<S>;
        } catch (err) {
          this.counters.malformedOutputs++;
          throw err;
        }
      });
    } catch (err) {
      failure = this.failed(err, opts);
      throw failure;
    } finally {
      endSpan(span, failure);
    }
  }

  /**
   * The answer as text deltas, as the model produces them. A failure before the first delta is
   * retried like `complete`; after it, the error ends the stream (the text so far was sent).
   */
  async *stream(opts: CallOptions): AsyncGenerator<string, void, undefined> {
    this.counters.calls++;
    const span = this.startSpan(opts, true);
    let failure: LlmError | undefined;
    const queue: { delta?: string; done?: true; err?: unknown }[] = [];
    let wake: (() => void) | undefined;
    const push = (x: { delta?: string; done?: true; err?: unknown }): void => {
      queue.push(x);
      wake?.();
    };
    let started = false;
    const stop = new AbortController();
    const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
    void this.withRetries(
      { ...opts, signal },
      async (req) => {
        for await (const part of this.adapter.stream(req)) {
          if (part.usage) this.count(part.usage, span);
          if (part.delta) {
            started = true;
            push({ delta: part.delta });
          }
        }
      },
      () => !started,
    )
      .then(() => push({ done: true }))
      .catch((err: unknown) => push({ err }));
    try {
      for (;;) {
        const next = queue.shift();
        if (!next) {
          await new Promise<void>((r) => (wake = r));
          wake = undefined;
          continue;
        }
        if (next.err !== undefined) {
          failure = this.failed(next.err, opts);
          throw failure;
        }
        if (next.done) return;
        yield next.delta!;
      }
    } finally {
      stop.abort();
      endSpan(span, failure);
    }
  }

  /** A client span per model call (OpenTelemetry's gen_ai conventions); a no-op without an SDK. */
  private startSpan(opts: CallOptions, streaming = false): CallSpan {
    const span = tracer.startSpan(`chat ${this.provider}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.system': this.provider,
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': this.adapter.modelFor?.(opts.tier) ?? opts.tier,
        'gen_ai.request.max_tokens': opts.maxTokens ?? this.maxTokens,
        'askbus.llm.tier': opts.tier,
        'askbus.llm.task': opts.task?.kind ?? 'chat',
        'askbus.llm.streaming': streaming,
      },
    });
    return { span, tokensIn: 0, tokensOut: 0 };
  }

  private count(usage: Usage | undefined, call?: CallSpan): void {
    if (!usage) return;
    this.counters.tokensIn += usage.tokensIn;
    this.counters.tokensOut += usage.tokensOut;
    if (call) {
      call.tokensIn += usage.tokensIn;
      call.tokensOut += usage.tokensOut;
    }
  }

  private failed(err: unknown, opts: CallOptions): LlmError {
    const e = LlmError.from(err);
    if (e.code !== 'cancelled') {
      this.counters.failures++;
      // A refusal of an open circuit is counted, not logged: the breaker logged its opening.
      if (e.code !== 'circuit_open') {
        this.opts.log?.(e.code === 'malformed' ? 'warn' : 'error', `llm call failed: ${e.message}`, {
          provider: this.provider,
          code: e.code,
          status: e.status,
          attempts: e.attempts,
          tier: opts.tier,
          task: opts.task?.kind,
        });
      }
    }
    return e;
  }

  /**
   * Runs `attempt` under the limit and the model's circuit breaker, with a timeout per attempt,
   * retrying what is retryable while the call and its query have retries left.
   */
  private async withRetries<T>(
    opts: CallOptions,
    attempt: (req: Omit<AdapterRequest, 'json'>) => Promise<T>,
    mayRetry: () => boolean = () => true,
  ): Promise<T> {
    const breaker = this.breakerFor(opts.tier);
    for (let n = 0; ; n++) {
      if (opts.signal?.aborted) throw new LlmError('cancelled', 'cancelled', undefined, n);
      const timer = new AbortController();
      const signal = opts.signal ? AbortSignal.any([opts.signal, timer.signal]) : timer.signal;
      const t = setTimeout(() => timer.abort(), this.timeoutMs);
      // What an attempt's failure was, told apart before the breaker counts it: the caller's
      // cancel (not the model's fault) from our own timeout (the model's).
      const classify = (err: unknown): LlmError =>
        opts.signal?.aborted
          ? new LlmError('cancelled', 'cancelled by the caller')
          : timer.signal.aborted
            ? new LlmError('timeout', `no answer within ${this.timeoutMs} ms`)
            : LlmError.from(err);
      const run = (): Promise<T> =>
        breaker.run(() =>
          attempt({
            messages: opts.messages,
            tier: opts.tier,
            maxTokens: opts.maxTokens ?? this.maxTokens,
            signal,
            task: opts.task,
          }).catch((err: unknown) => {
            throw classify(err);
          }),
        );
      try {
        // An open circuit refuses at once, without queueing for a slot.
        return await (breaker.refusing
          ? run()
          : this.limit(() =>
              signal.aborted
                ? Promise.reject(new LlmError('timeout', 'timed out waiting for a slot'))
                : run(),
            ));
      } catch (err) {
        let e = LlmError.from(err);
        if (opts.signal?.aborted) e = new LlmError('cancelled', 'cancelled by the caller');
        e.attempts = n + 1;
        if (e.code === 'circuit_open') this.counters.refusedOpen++;
        if (!e.retryable || n >= this.maxRetries || !mayRetry()) throw e;
        if (opts.queryId !== undefined && !this.budgets.take(opts.queryId)) {
          this.counters.retriesDenied++;
          throw e;
        }
        this.counters.retries++;
        this.opts.log?.('warn', `llm call failed, retrying: ${e.message}`, { code: e.code, attempt: n + 1 });
        const wait = Math.random() * this.backoffMs * 2 ** n; // full jitter
        await sleep(wait, opts.signal);
      } finally {
        clearTimeout(t);
      }
    }
  }
}

/** One model call's span and the tokens its attempts used (retries add up). */
interface CallSpan {
  span: Span;
  tokensIn: number;
  tokensOut: number;
}

function endSpan({ span, tokensIn, tokensOut }: CallSpan, failure: LlmError | undefined): void {
  span.setAttribute('gen_ai.usage.input_tokens', tokensIn);
  span.setAttribute('gen_ai.usage.output_tokens', tokensOut);
  if (failure) {
    span.setAttribute('error.type', failure.code);
    if (failure.code !== 'cancelled')
      span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
    else {
      // Cancelled on purpose (early termination, a client that left): marked, not an error.
      span.setAttribute('askbus.cancelled', true);
      span.addEvent('cancelled');
    }
  }
  span.end();
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(done, ms);
    function done(): void {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort(): void {
      clearTimeout(t);
      reject(new LlmError('cancelled', 'cancelled by the caller'));
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
