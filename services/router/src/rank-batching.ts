import type { ScoredItem } from '@askbus/contracts';

/** The most items one `rank.v1.score` request may carry (ScoreRequest). */
export const MAX_RANK_ITEMS = 200;

/**
 * How many candidates go in one ranking call, learnt from who scores them.
 *
 * Batches are there to spread a language model's latency: the calls run at once, over the ranker
 * replicas and their model calls. A ranker that scores with the local scorer has no latency to
 * spread (50 items take about a millisecond), while each call is a bus round trip (a request and
 * its answer through nats-server, decoded and checked at both ends) that costs more than the
 * scoring. So while the rankers' answers say the local scorer scored them, a query's candidates
 * go in one call; once a model scores (or fails and the local scorer stands in for it), the
 * configured batches come back, and stay for `modelMemoryMs` after the last model answer so a
 * mix of replicas does not flip the size query by query. Until the first answer: batches.
 */
export class RankBatching {
  private local = false;
  private modelSeenAt = -Infinity;

  constructor(
    private readonly batchSize: number,
    private readonly modelMemoryMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Items per ranking call for the next query. */
  size(): number {
    return this.local && this.now() - this.modelSeenAt > this.modelMemoryMs ? MAX_RANK_ITEMS : this.batchSize;
  }

  /** Learns from one ranker answer who scored its items. */
  observe(items: readonly ScoredItem[]): void {
    if (items.length === 0) return;
    const byModel = items.some((s) => s.scoredBy === 'model' || s.fallbackReason !== undefined);
    if (byModel) this.modelSeenAt = this.now();
    this.local = !byModel && items.every((s) => s.scoredBy === 'local');
  }
}
