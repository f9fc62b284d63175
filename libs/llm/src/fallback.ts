import type { z } from 'zod';
import type { Llm } from './client';
import { LlmError, type LlmErrorCode } from './errors';
import { parseAnswer } from './json';
import { LocalAdapter } from './local';
import type { CallOptions, CompleteOptions, LlmTask } from './types';

/**
 * A model that fails must degrade a query, never fail it: these helpers make a call and, when
 * it fails (an HTTP error, a timeout, a malformed answer, an open circuit; never a cancel),
 * give the local provider's answer to the same structured task instead, count it on the
 * client (askbus_llm_fallbacks_total) and say why, so the caller can tell the user.
 */

/** Why the local answer was used: the failed call's error code, or `incomplete` (see ranking). */
export type FallbackReason = Exclude<LlmErrorCode, 'cancelled'> | 'incomplete';

export interface Fallback {
  reason: FallbackReason;
  /** The failure, for logs. */
  message: string;
}

const local = new LocalAdapter();

/** A reason in words, for status messages ("… because the model's answer was malformed"). */
export function describeFallback(reason: FallbackReason): string {
  switch (reason) {
    case 'malformed':
      return "the model's answer was malformed";
    case 'timeout':
      return 'the model did not answer in time';
    case 'unavailable':
      return 'the model was unavailable';
    case 'rate_limited':
      return 'the model was rate-limited';
    case 'bad_request':
      return 'the model refused the request';
    case 'circuit_open':
      return 'the model kept failing, so it is not being called for a while';
    case 'unsupported':
      return 'the model could not do this task';
    case 'incomplete':
      return "the model's answer left them out";
  }
}

/** The fallback a failed call leads to, or the error again when it must not fall back (a cancel). */
export function fallbackFor(err: unknown, signal: AbortSignal | undefined): Fallback {
  const e = LlmError.from(err);
  if (e.code === 'cancelled' || signal?.aborted) throw e;
  return { reason: e.code, message: e.message };
}

type Structured<S extends z.ZodType> = CompleteOptions<S> & { jsonSchema: S; task: LlmTask };

/** The model's answer, else the local provider's answer to the same task (with why). */
export async function completeOrLocal<S extends z.ZodType>(
  llm: Llm,
  opts: Structured<S>,
): Promise<{ answer: z.infer<S>; fallback?: Fallback }> {
  try {
    const answer = (await llm.complete(opts)) as z.infer<S>;
    return { answer };
  } catch (err) {
    const fallback = fallbackFor(err, opts.signal);
    const answer = await localAnswer(opts.jsonSchema, opts);
    llm.recordFallback(opts.task.kind, fallback.reason);
    return { answer, fallback };
  }
}

/** The local provider's answer to a structured task, parsed as a model's would be. */
export async function localAnswer<S extends z.ZodType>(
  schema: S,
  opts: Pick<CallOptions, 'tier' | 'signal' | 'maxTokens'> & { task: LlmTask },
): Promise<z.infer<S>> {
  const { text } = await local.complete({
    messages: [],
    tier: opts.tier,
    maxTokens: opts.maxTokens ?? 1024,
    signal: opts.signal ?? new AbortController().signal,
    task: opts.task,
  });
  return parseAnswer(schema, text);
}

/**
 * The model's text deltas; when the model fails before its first delta, the local composer's
 * text instead, after `onFallback` was told why. A failure after the first delta is thrown:
 * what was sent cannot be taken back, the caller closes the answer with the text so far.
 */
export async function* streamOrLocal(
  llm: Llm,
  opts: CallOptions & { task: LlmTask },
  onFallback: (f: Fallback) => void,
): AsyncGenerator<string, void, undefined> {
  let started = false;
  try {
    for await (const delta of llm.stream(opts)) {
      started = true;
      yield delta;
    }
    return;
  } catch (err) {
    if (started) throw err;
    const fallback = fallbackFor(err, opts.signal);
    llm.recordFallback(opts.task.kind, fallback.reason);
    onFallback(fallback);
  }
  for await (const part of local.stream({
    messages: opts.messages,
    tier: opts.tier,
    maxTokens: opts.maxTokens ?? 1024,
    signal: opts.signal ?? new AbortController().signal,
    task: opts.task,
  })) {
    if (part.delta) yield part.delta;
  }
}
