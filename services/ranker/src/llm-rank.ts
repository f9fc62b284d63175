import { understandingNote } from '@askbus/understand';
import type { ScoredItem, Understanding } from '@askbus/contracts';
import {
  fallbackFor,
  RankAnswer,
  RankBatchAnswer,
  rankingMessages,
  rankingPromptFor,
  type Fallback,
  type FallbackReason,
  type Llm,
  type PromptConfig,
} from '@askbus/llm';
import { rankAnalysed, type AnalysedItem } from './rank';

/** Counters of one ranker replica. */
export interface RankerStats {
  /** Ranking requests served (one per `rank.v1.score` stream). */
  requests: number;
  /** Language-model calls made. */
  llmCalls: number;
  scoredItems: number;
  /**
   * Items the local scorer scored because their model call failed, their answer was malformed
   * or left them out, or the model's circuit was open (counted in scoredItems too).
   */
  fallbackItems: number;
}

export const newRankerStats = (): RankerStats => ({
  requests: 0,
  llmCalls: 0,
  scoredItems: 0,
  fallbackItems: 0,
});

export interface LlmRankSettings {
  llm: Llm;
  prompts: PromptConfig;
  /** Items per language-model call: 1 is NLWeb's one call per item. */
  batchSize: number;
  stats: RankerStats;
  log?: (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
}

/** What one ranking request carries besides its items. */
export interface RankRequestContext {
  /** The query whose retry budget the model calls share. */
  queryId?: string;
  /** The question as structure, for the local scorer when it stands in for the model. */
  understanding?: Understanding;
}

/**
 * NLWeb's ranking with a language model: a prompt per schema.org type from the configuration,
 * one call per item or per batch of items of one prompt, all calls at once (the provider's
 * concurrency limit applies). Each call's scores are yielded together the moment it answers. An item whose
 * call failed, or whose answer was malformed or left it out, is scored by the local scorer
 * instead (`scoredBy: 'local'` with its `fallbackReason`): a failing model degrades the ranking,
 * it never loses an item. A cancelled request yields nothing more.
 */
export async function* rankWithLlm(
  query: string,
  items: readonly AnalysedItem[],
  settings: LlmRankSettings,
  signal: AbortSignal,
  request: RankRequestContext = {},
): AsyncGenerator<ScoredItem[], void, undefined> {
  // Group by prompt (the item's type), then cut each group into batches.
  const groups = new Map<string, AnalysedItem[]>();
  for (const item of items) {
    const key = rankingPromptFor(settings.prompts, item.item['@type']).key;
    const g = groups.get(key);
    if (g) g.push(item);
    else groups.set(key, [item]);
  }
  const calls: AnalysedItem[][] = [];
  const size = Math.max(1, settings.batchSize);
  for (const group of groups.values())
    for (let i = 0; i < group.length; i += size) calls.push(group.slice(i, i + size));

  const pending = new Map<number, Promise<{ index: number; scored: ScoredItem[] }>>();
  calls.forEach((batch, index) => {
    pending.set(
      index,
      scoreCall(query, batch, settings, signal, request).then((scored) => ({ index, scored })),
    );
  });
  try {
    yield* drain();
  } finally {
    // Stopped early (cancelled, consumer gone): the calls still running end on the signal.
    for (const p of pending.values()) p.catch(() => undefined);
  }

  async function* drain(): AsyncGenerator<ScoredItem[], void, undefined> {
    while (pending.size > 0) {
      const { index, scored } = await Promise.race(pending.values());
      pending.delete(index);
      if (signal.aborted) return;
      if (scored.length === 0) continue;
      settings.stats.scoredItems += scored.length;
      settings.stats.fallbackItems += scored.filter((s) => s.fallbackReason !== undefined).length;
      yield scored;
    }
  }
}

/** The local scorer's scores for `items` (as the local provider gives them), marked as standing in for the model and why. */
function scoredLocally(
  query: string,
  items: readonly AnalysedItem[],
  reason: FallbackReason,
  settings: LlmRankSettings,
  request: RankRequestContext,
): ScoredItem[] {
  if (items.length === 0) return [];
  settings.llm.recordFallback('rank', reason, items.length);
  return rankAnalysed(query, items, request.understanding).map((s) => ({
    ...s,
    scoredBy: 'local' as const,
    fallbackReason: reason,
  }));
}

async function scoreCall(
  query: string,
  analysed: AnalysedItem[],
  settings: LlmRankSettings,
  signal: AbortSignal,
  request: RankRequestContext,
): Promise<ScoredItem[]> {
  settings.stats.llmCalls++;
  const batch = analysed.map((a) => a.item);
  const messages = rankingMessages(settings.prompts, query, batch, understandingNote(request.understanding));
  const { queryId } = request;
  const call = { messages, tier: 'low' as const, signal, ...(queryId ? { queryId } : {}) };
  try {
    if (batch.length === 1) {
      const a = await settings.llm.complete({
        ...call,
        jsonSchema: RankAnswer,
        schemaName: 'ranking',
        maxTokens: 256,
        task: { kind: 'rank', query, items: batch },
      });
      return [{ url: batch[0]!.url, score: a.score, description: a.description, scoredBy: 'model' }];
    }
    const a = await settings.llm.complete({
      ...call,
      jsonSchema: RankBatchAnswer,
      schemaName: 'ranking_batch',
      maxTokens: 160 * batch.length,
      task: { kind: 'rank', query, items: batch, batch: true },
    });
    const scored: ScoredItem[] = [];
    const seen = new Set<number>();
    for (const r of a.results) {
      const item = batch[r.index];
      if (!item || seen.has(r.index)) continue; // an index we did not send, or said twice
      seen.add(r.index);
      scored.push({ url: item.url, score: r.score, description: r.description, scoredBy: 'model' });
    }
    const left = analysed.filter((_, i) => !seen.has(i));
    if (left.length > 0) {
      settings.log?.('warn', 'batch ranking answer left items out: scored locally', {
        missing: left.length,
        of: batch.length,
      });
    }
    return [...scored, ...scoredLocally(query, left, 'incomplete', settings, request)];
  } catch (err) {
    let fallback: Fallback;
    try {
      fallback = fallbackFor(err, signal);
    } catch {
      return []; // the whole request is being cancelled
    }
    return scoredLocally(query, analysed, fallback.reason, settings, request);
  }
}
