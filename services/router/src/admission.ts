/**
 * Admission to the retriever: at most `limit` of this router's calls to it run at once, the rest
 * wait in arrival order. The retriever's work is CPU, so a burst sent all at once only makes
 * every call late together; and a call's time limit starts when it is sent, so calls waiting
 * behind a thousand others would time out. Here they wait before they are sent, with the NATS
 * heartbeats of their ask streams keeping the callers informed, and each gets its full limit.
 */
export class Admission {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`admission limit must be ≥ 1, got ${limit}`);
  }

  /** Calls waiting for a place. */
  get queued(): number {
    return this.waiting.length;
  }

  get inFlight(): number {
    return this.running;
  }

  /** Runs `fn` once a place is free; a signal aborted while waiting gives up the wait. */
  async run<T>(signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    await this.enter(signal);
    try {
      return await fn();
    } finally {
      this.leave();
    }
  }

  private enter(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    if (this.running < this.limit) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const admit = (): void => {
        signal?.removeEventListener('abort', onAbort);
        this.running++;
        resolve();
      };
      const onAbort = (): void => {
        const at = this.waiting.indexOf(admit);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(admit);
    });
  }

  private leave(): void {
    this.running--;
    this.waiting.shift()?.();
  }
}

/** `fn` through `admission` when there is one, else at once. */
export function admitted<T>(
  admission: Admission | undefined,
  signal: AbortSignal | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  return admission ? admission.run(signal, fn) : fn();
}
