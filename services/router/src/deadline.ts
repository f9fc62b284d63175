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

/** A signal that aborts at `deadline` (epoch ms) or with `signal`; `signal` itself without a deadline. */
export function untilDeadline(signal: AbortSignal, deadline: number | undefined): AbortSignal {
  if (deadline === undefined) return signal;
  return AbortSignal.any([signal, AbortSignal.timeout(Math.max(0, Math.ceil(deadline - Date.now())))]);
}
