/**
 * Yields the values of several async iterables as they arrive, whichever is first.
 * A source that throws is reported through `onError` and the others go on.
 */
export async function* mergeAsync<T>(
  sources: AsyncIterable<T>[],
  onError: (err: unknown, index: number) => void,
): AsyncGenerator<T, void, undefined> {
  const iterators = sources.map((s) => s[Symbol.asyncIterator]());
  const pending = new Map<number, Promise<{ index: number; result?: IteratorResult<T>; error?: unknown }>>();
  const pull = (index: number): void => {
    pending.set(
      index,
      iterators[index]!.next().then(
        (result) => ({ index, result }),
        (error: unknown) => ({ index, error }),
      ),
    );
  };
  iterators.forEach((_, i) => pull(i));
  try {
    while (pending.size > 0) {
      const { index, result, error } = await Promise.race(pending.values());
      if (error !== undefined || !result) {
        pending.delete(index);
        onError(error, index);
      } else if (result.done) {
        pending.delete(index);
      } else {
        pull(index);
        yield result.value;
      }
    }
  } finally {
    // The consumer stopped early: ask the sources still running to stop. Not awaited: a source
    // busy in next() only sees return() after that settles; its own AbortSignal ends it sooner.
    for (const i of pending.keys()) void iterators[i]!.return?.().catch(() => undefined);
  }
}
