import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { contracts } from '@askbus/contracts';
import type { Bus } from '@askbus/bus';
import { llmFromEnv, loadPrompts, type Llm, type PromptConfig } from '@askbus/llm';
import { newRankerStats, rankWithLlm, type RankerStats } from './llm-rank';
import { rankItems } from './rank';

export { rankItems } from './rank';
export { rankWithLlm, newRankerStats, type RankerStats } from './llm-rank';

/** The queue group of every ranker replica. */
export const RANKER_SERVICE = 'ranker';

export interface RankerOptions {
  /**
   * Artificial wait before each batch, to stand in for a model's latency in tests and
   * benchmarks. Defaults to ASKBUS_RANK_DELAY_MS, else 0.
   */
  delayMs?: number;
  /**
   * The language model that scores. Defaults to the provider ASKBUS_LLM_* names; with the local
   * provider (the default) the ranker scores the whole batch with the local scorer at once.
   */
  llm?: Llm;
  /** Items per language-model call (ASKBUS_RANK_LLM_BATCH, default 1: one call per item). */
  llmBatchSize?: number;
  /** Ranking prompts (default: ASKBUS_PROMPTS or config/prompts.json). */
  prompts?: PromptConfig;
  log?: (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
}

export interface RankerHandle {
  delayMs: number;
  llmBatchSize: number;
  provider: string;
  stats: RankerStats;
  llm: Llm;
}

const DelayMs = z.coerce.number().int().min(0).max(600_000);
const BatchSize = z.coerce.number().int().min(1).max(200);

/** Ranker settings from the environment (ASKBUS_RANK_DELAY_MS, ASKBUS_RANK_LLM_BATCH). */
export function rankerOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): RankerOptions {
  const out: RankerOptions = {};
  const raw = env.ASKBUS_RANK_DELAY_MS;
  if (raw !== undefined && raw.trim() !== '') {
    const parsed = DelayMs.safeParse(raw);
    if (!parsed.success)
      throw new Error(`ASKBUS_RANK_DELAY_MS must be a whole number of ms ≥ 0, got "${raw}"`);
    out.delayMs = parsed.data;
  }
  const batch = env.ASKBUS_RANK_LLM_BATCH;
  if (batch !== undefined && batch.trim() !== '') {
    const parsed = BatchSize.safeParse(batch);
    if (!parsed.success)
      throw new Error(`ASKBUS_RANK_LLM_BATCH must be a whole number 1-200, got "${batch}"`);
    out.llmBatchSize = parsed.data;
  }
  return out;
}

/** Waits `ms`, or rejects as soon as `signal` aborts (a cancel must not wait out the delay). */
export async function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return;
  await sleep(ms, undefined, { signal });
}

/**
 * Serves `rank.v1.score` as a stream. With the local provider: scores the whole batch with the
 * local scorer, then sends one ScoredItem per item, best first. With a language model: one
 * ScoredItem per item as soon as its call answers; an item the model failed on is scored by the
 * local scorer instead and marked so (`scoredBy: 'local'`, `fallbackReason`), so a model that
 * answers garbage, errors or hangs degrades the ranking and never fails it.
 */
export function startRanker(bus: Bus, opts: RankerOptions = {}): RankerHandle {
  const env = rankerOptionsFromEnv();
  const delayMs = opts.delayMs ?? env.delayMs ?? 0;
  const llmBatchSize = opts.llmBatchSize ?? env.llmBatchSize ?? 1;
  const llm = opts.llm ?? llmFromEnv(process.env, { log: opts.log });
  const prompts = llm.provider === 'local' ? undefined : (opts.prompts ?? loadPrompts());
  const stats = newRankerStats();
  bus.serveStream(
    contracts.score,
    async function* (req, ctx) {
      stats.requests++;
      await abortableDelay(delayMs, ctx.signal);
      if (!prompts) {
        const ranked = rankItems(req.query, req.items, req.understanding);
        stats.scoredItems += ranked.length;
        yield* ranked;
        return;
      }
      const reasons = new Map<string, number>();
      for await (const scored of rankWithLlm(
        req.query,
        req.items,
        { llm, prompts, batchSize: llmBatchSize, stats, log: opts.log },
        ctx.signal,
        { queryId: ctx.queryId, ...(req.understanding ? { understanding: req.understanding } : {}) },
      )) {
        const reason = scored.fallbackReason;
        if (reason !== undefined) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
        yield scored;
      }
      if (reasons.size > 0) {
        opts.log?.('warn', 'items scored by the local scorer: the model failed on them', {
          local: [...reasons.values()].reduce((a, b) => a + b, 0),
          of: req.items.length,
          reasons: Object.fromEntries(reasons),
          queryId: ctx.queryId,
        });
      }
    },
    { queue: RANKER_SERVICE },
  );
  return { delayMs, llmBatchSize, provider: llm.provider, stats, llm };
}
