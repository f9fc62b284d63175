export type LlmErrorCode =
  | 'timeout'
  | 'rate_limited'
  | 'unavailable'
  | 'bad_request'
  | 'malformed'
  | 'cancelled'
  | 'unsupported'
  /** Refused without calling: the model's circuit breaker is open (see breaker.ts). */
  | 'circuit_open';

/** A failed language-model call: it has a code, the HTTP status when there was one, and attempts. */
export class LlmError extends Error {
  constructor(
    readonly code: LlmErrorCode,
    message: string,
    readonly status?: number,
    public attempts = 1,
  ) {
    super(message);
    this.name = 'LlmError';
  }

  /** Worth another attempt: rate limits, server errors, timeouts, lost connections. */
  get retryable(): boolean {
    return this.code === 'timeout' || this.code === 'rate_limited' || this.code === 'unavailable';
  }

  /** Classifies what an SDK or fetch threw (both SDKs put the HTTP status on `.status`). */
  static from(err: unknown): LlmError {
    if (err instanceof LlmError) return err;
    const e = err as { status?: unknown; name?: unknown; message?: unknown } | null;
    const status = typeof e?.status === 'number' ? e.status : undefined;
    const message = typeof e?.message === 'string' ? e.message : String(err);
    const name = typeof e?.name === 'string' ? e.name : '';
    if (status === 429) return new LlmError('rate_limited', message, status);
    if (status === 408) return new LlmError('timeout', message, status);
    if (status !== undefined && status >= 500) return new LlmError('unavailable', message, status);
    if (status !== undefined && status >= 400) return new LlmError('bad_request', message, status);
    if (name === 'APIUserAbortError' || name === 'AbortError') return new LlmError('cancelled', message);
    if (/timeout|timed out/i.test(name + message)) return new LlmError('timeout', message);
    // No status: the connection failed or dropped.
    return new LlmError('unavailable', message);
  }
}
