import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { contracts } from '@askbus/contracts';
import type { Bus } from '@askbus/bus';
import { rankItems } from './rank';

export { rankItems } from './rank';

/** The queue group of every ranker replica. */
export const RANKER_SERVICE = 'ranker';

export interface RankerOptions {
  /**
   * Artificial wait before each batch, to stand in for a model's latency in tests and
   * benchmarks. Defaults to ASKBUS_RANK_DELAY_MS, else 0.
   */
  delayMs?: number;
}

const DelayMs = z.coerce.number().int().min(0).max(600_000);

/** Ranker settings from the environment (ASKBUS_RANK_DELAY_MS). */
export function rankerOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): RankerOptions {
  const raw = env.ASKBUS_RANK_DELAY_MS;
  if (raw === undefined || raw.trim() === '') return {};
  const parsed = DelayMs.safeParse(raw);
  if (!parsed.success) throw new Error(`ASKBUS_RANK_DELAY_MS must be a whole number of ms ≥ 0, got "${raw}"`);
  return { delayMs: parsed.data };
}

/** Waits `ms`, or rejects as soon as `signal` aborts (a cancel must not wait out the delay). */
export async function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return;
  await sleep(ms, undefined, { signal });
}

/**
 * Serves `rank.v1.score` as a stream: scores the whole batch with the local scorer, then sends
 * one ScoredItem per item, best first. Returns the settings in effect.
 */
export function startRanker(bus: Bus, opts: RankerOptions = {}): Required<RankerOptions> {
  const delayMs = opts.delayMs ?? rankerOptionsFromEnv().delayMs ?? 0;
  bus.serveStream(
    contracts.score,
    async function* (req, ctx) {
      await abortableDelay(delayMs, ctx.signal);
      yield* rankItems(req.query, req.items);
    },
    { queue: RANKER_SERVICE },
  );
  return { delayMs };
}
