/**
 * Retries allowed per query, in this process. A query makes many model calls at once (one per
 * item ranked, one per tool scored); retrying each of them on a failing model multiplies the
 * load on it just when it is down. So a call retries only while its query has retries left.
 * Queries are known by their queryId; their entries are forgotten after `ttlMs`, and the
 * oldest go first beyond `maxQueries`.
 */
export class RetryBudgets {
  private readonly left = new Map<string, { retries: number; at: number }>();

  constructor(
    readonly perQuery: number,
    private readonly ttlMs = 10 * 60_000,
    private readonly maxQueries = 10_000,
  ) {}

  /** Takes one retry of `queryId`'s budget; false when none is left. */
  take(queryId: string): boolean {
    const now = Date.now();
    let entry = this.left.get(queryId);
    if (!entry || now - entry.at > this.ttlMs) {
      this.left.delete(queryId);
      entry = { retries: this.perQuery, at: now };
      this.left.set(queryId, entry);
      this.prune(now);
    }
    if (entry.retries <= 0) return false;
    entry.retries--;
    return true;
  }

  /** Retries `queryId` has left. */
  remaining(queryId: string): number {
    return this.left.get(queryId)?.retries ?? this.perQuery;
  }

  private prune(now: number): void {
    // Insertion order is age order: drop from the front while too many or expired.
    for (const [id, entry] of this.left) {
      if (this.left.size <= this.maxQueries && now - entry.at <= this.ttlMs) break;
      this.left.delete(id);
    }
  }
}
