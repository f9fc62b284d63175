import type { ScoredItem, StoredItem } from '@askbus/contracts';
import {
  LlmError,
  RankAnswer,
  RankBatchAnswer,
  rankingMessages,
  rankingPromptFor,
  type Llm,
  type PromptConfig,
} from '@askbus/llm';

/** Counters of one ranker replica. */
export interface RankerStats {
  /** Ranking requests served (one per `rank.v1.score` stream). */
  requests: number;
  /** Language-model calls made. */
  llmCalls: number;
  scoredItems: number;
  /** Items whose call failed or whose answer was malformed or incomplete. */
  failedItems: number;
}

export const newRankerStats = (): RankerStats => ({
  requests: 0,
  llmCalls: 0,
  scoredItems: 0,
  failedItems: 0,
});

export interface LlmRankSettings {
  llm: Llm;
  prompts: PromptConfig;
  /** Items per language-model call: 1 is NLWeb's one call per item. */
  batchSize: number;
  stats: RankerStats;
  log?: (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
}

/** An item the model could not score; the stream ends with an error naming how many. */
export interface RankFailure {
  url: string;
  reason: string;
}

/**
 * NLWeb's ranking with a language model: a prompt per schema.org type from the configuration,
 * one call per item or per batch of items of one prompt, all calls at once (the provider's
 * concurrency limit applies). Each score is yielded the moment its call answers. Items whose
 * call failed are reported to `onFailure`, never dropped silently.
 */
export async function* rankWithLlm(
  query: string,
  items: readonly StoredItem[],
  settings: LlmRankSettings,
  signal: AbortSignal,
  onFailure: (f: RankFailure) => void,
): AsyncGenerator<ScoredItem, void, undefined> {
  // Group by prompt (the item's type), then cut each group into batches.
  const groups = new Map<string, StoredItem[]>();
  for (const item of items) {
    const key = rankingPromptFor(settings.prompts, item['@type']).key;
    const g = groups.get(key);
    if (g) g.push(item);
    else groups.set(key, [item]);
  }
  const calls: StoredItem[][] = [];
  const size = Math.max(1, settings.batchSize);
  for (const group of groups.values())
    for (let i = 0; i < group.length; i += size) calls.push(group.slice(i, i + size));

  type Outcome = { scored: ScoredItem[]; failed: RankFailure[] };
  const pending = new Map<number, Promise<{ index: number; outcome: Outcome }>>();
  calls.forEach((batch, index) => {
    pending.set(
      index,
      scoreCall(query, batch, settings, signal).then((outcome) => ({ index, outcome })),
    );
  });
  try {
    yield* drain();
  } finally {
    // Stopped early (cancelled, consumer gone): the calls still running end on the signal.
    for (const p of pending.values()) p.catch(() => undefined);
  }

  async function* drain(): AsyncGenerator<ScoredItem, void, undefined> {
    while (pending.size > 0) {
      const { index, outcome } = await Promise.race(pending.values());
      pending.delete(index);
      if (signal.aborted) return;
      for (const f of outcome.failed) {
        settings.stats.failedItems++;
        onFailure(f);
      }
      for (const s of outcome.scored) {
        settings.stats.scoredItems++;
        yield s;
      }
    }
  }
}

async function scoreCall(
  query: string,
  batch: StoredItem[],
  settings: LlmRankSettings,
  signal: AbortSignal,
): Promise<{ scored: ScoredItem[]; failed: RankFailure[] }> {
  settings.stats.llmCalls++;
  const messages = rankingMessages(settings.prompts, query, batch);
  try {
    if (batch.length === 1) {
      const a = await settings.llm.complete({
        messages,
        tier: 'low',
        jsonSchema: RankAnswer,
        schemaName: 'ranking',
        signal,
        maxTokens: 256,
        task: { kind: 'rank', query, items: batch },
      });
      return { scored: [{ url: batch[0]!.url, score: a.score, description: a.description }], failed: [] };
    }
    const a = await settings.llm.complete({
      messages,
      tier: 'low',
      jsonSchema: RankBatchAnswer,
      schemaName: 'ranking_batch',
      signal,
      maxTokens: 160 * batch.length,
      task: { kind: 'rank', query, items: batch, batch: true },
    });
    const scored: ScoredItem[] = [];
    const seen = new Set<number>();
    for (const r of a.results) {
      const item = batch[r.index];
      if (!item || seen.has(r.index)) continue; // an index we did not send, or said twice
      seen.add(r.index);
      scored.push({ url: item.url, score: r.score, description: r.description });
    }
    const failed = batch
      .filter((_, i) => !seen.has(i))
      .map((it) => ({ url: it.url, reason: 'the batch answer has no entry for it' }));
    if (failed.length > 0) {
      settings.log?.('warn', 'batch ranking answer left items out', {
        missing: failed.length,
        of: batch.length,
      });
    }
    return { scored, failed };
  } catch (err) {
    if (signal.aborted) return { scored: [], failed: [] }; // the whole request is being cancelled
    const e = LlmError.from(err);
    return { scored: [], failed: batch.map((it) => ({ url: it.url, reason: `${e.code}: ${e.message}` })) };
  }
}
