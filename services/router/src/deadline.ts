/** The most kept back from a caller's deadline for sending the answer so far (ms). */
const MAX_RESERVE_MS = 1_000;

/**
 * When a query must stop waiting on models and answer with what it has (epoch ms), or
 * undefined for no limit: the router's own budget per query, or the caller's deadline less a
 * reserve (a tenth of the time left, at most 1 s) so the last messages still reach the caller
 * before it gives up; whichever is sooner.
 */
export function answerDeadline(
  now: number,
  callerDeadline: number | undefined,
  budgetMs: number | undefined,
): number | undefined {
  const own = budgetMs === undefined ? Infinity : now + budgetMs;
  const caller =
    callerDeadline === undefined
      ? Infinity
      : callerDeadline - Math.min(MAX_RESERVE_MS, Math.max(0, (callerDeadline - now) / 10));
  const at = Math.min(own, caller);
  return at === Infinity ? undefined : Math.floor(at);
}

/**
 * A signal that aborts at `deadline` (epoch ms) or with `signal`; `signal` itself without a
 * deadline. Its own timer holds it: AbortSignal.timeout keeps only a weak reference to its
 * signal, so combined by AbortSignal.any it could be collected and the deadline never fire.
 */
export function untilDeadline(signal: AbortSignal, deadline: number | undefined): AbortSignal {
  if (deadline === undefined) return signal;
  const controller = new AbortController();
  const stop = (): void => {
    clearTimeout(timer);
    controller.abort(signal.reason);
  };
  const timer = setTimeout(
    () => {
      signal.removeEventListener('abort', stop);
      controller.abort(new DOMException("the query's deadline passed", 'TimeoutError'));
    },
    Math.max(0, Math.ceil(deadline - Date.now())),
  );
  timer.unref();
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
  return controller.signal;
}

/** True when a signal of untilDeadline aborted because of its deadline, not the query's own cancel. */
export function passedDeadline(deadlineSignal: AbortSignal, querySignal: AbortSignal | undefined): boolean {
  return deadlineSignal.aborted && !querySignal?.aborted;
}

/** `work`'s value, or the signal's reason as soon as it aborts (work is then left to end alone). */
export async function beforeAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * The values of `source` until `signal` aborts, then the signal's reason is thrown at once. The
 * source is not waited on (a model client may take its time to notice its own abort); it is
 * closed in the background.
 */
export async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      const step = await beforeAbort(it.next(), signal);
      if (step.done) return;
      yield step.value;
    }
  } finally {
    void it.return?.(undefined)?.catch(() => undefined);
  }
}
