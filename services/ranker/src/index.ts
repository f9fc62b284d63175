import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { contracts } from '@askbus/contracts';
import type { Bus } from '@askbus/bus';
import { llmFromEnv, loadPrompts, type Llm, type PromptConfig } from '@askbus/llm';
import { newRankerStats, rankWithLlm, type RankerStats } from './llm-rank';
import { rankAnalysed } from './rank';
import { AnalysisCache } from './analysis-cache';

export { rankItems, rankAnalysed, analyseItem, type AnalysedItem, type RankView } from './rank';
export { AnalysisCache, rankViewOf } from './analysis-cache';
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
  /**
   * Items whose analysis (facts, words, description) the ranker keeps between requests, least
   * recently used dropped first (ASKBUS_RANK_CACHE_ITEMS, default 2,000; about 12 KB each on the
   * demo movies; 0: none).
   */
  cacheItems?: number;
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
  /** The analyses kept between requests (its hits and misses count them). */
  cache: AnalysisCache;
}

/** Default of RankerOptions.cacheItems. */
export const DEFAULT_RANK_CACHE_ITEMS = 2_000;

const DelayMs = z.coerce.number().int().min(0).max(600_000);
const BatchSize = z.coerce.number().int().min(1).max(200);
const CacheItems = z.coerce.number().int().min(0).max(1_000_000);

/** Ranker settings from the environment (ASKBUS_RANK_DELAY_MS, ASKBUS_RANK_LLM_BATCH, ASKBUS_RANK_CACHE_ITEMS). */
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
  const cache = env.ASKBUS_RANK_CACHE_ITEMS;
  if (cache !== undefined && cache.trim() !== '') {
    const parsed = CacheItems.safeParse(cache);
    if (!parsed.success)
      throw new Error(`ASKBUS_RANK_CACHE_ITEMS must be a whole number 0-1000000, got "${cache}"`);
    out.cacheItems = parsed.data;
  }
  return out;
}

/** Waits `ms`, or rejects as soon as `signal` aborts (a cancel must not wait out the delay). */
export async function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return;
  await sleep(ms, undefined, { signal });
}

/**
 * Serves `rank.v1.score` as a stream of ScoredBatches. With the local provider: scores the whole
 * request with the local scorer and sends it as one batch, best first. With a language model:
 * one batch per model call as soon as it answers; an item the model failed on is scored by the
 * local scorer instead and marked so (`scoredBy: 'local'`, `fallbackReason`), so a model that
 * answers garbage, errors or hangs degrades the ranking and never fails it. Items are analysed
 * once and the analysis kept (AnalysisCache) for the next request that sends them.
 */
export function startRanker(bus: Bus, opts: RankerOptions = {}): RankerHandle {
  const env = rankerOptionsFromEnv();
  const delayMs = opts.delayMs ?? env.delayMs ?? 0;
  const llmBatchSize = opts.llmBatchSize ?? env.llmBatchSize ?? 1;
  const llm = opts.llm ?? llmFromEnv(process.env, { log: opts.log });
  const prompts = llm.provider === 'local' ? undefined : (opts.prompts ?? loadPrompts());
  const stats = newRankerStats();
  const cache = new AnalysisCache(opts.cacheItems ?? env.cacheItems ?? DEFAULT_RANK_CACHE_ITEMS);
  bus.serveStream(
    contracts.score,
    async function* (req, ctx) {
      stats.requests++;
      await abortableDelay(delayMs, ctx.signal);
      const analysed = req.items.map((item) => cache.analyse(item));
      if (!prompts) {
        const ranked = rankAnalysed(req.query, analysed, req.understanding);
        stats.scoredItems += ranked.length;
        // said, so callers can tell no model's latency is behind it (the router's RankBatching)
        for (const r of ranked) r.scoredBy = 'local';
        yield { items: ranked };
        return;
      }
      const reasons = new Map<string, number>();
      for await (const scored of rankWithLlm(
        req.query,
        analysed,
        { llm, prompts, batchSize: llmBatchSize, stats, log: opts.log },
        ctx.signal,
        { queryId: ctx.queryId, ...(req.understanding ? { understanding: req.understanding } : {}) },
      )) {
        for (const { fallbackReason: reason } of scored)
          if (reason !== undefined) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
        yield { items: scored };
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
  return { delayMs, llmBatchSize, provider: llm.provider, stats, llm, cache };
}
