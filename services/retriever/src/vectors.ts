/**
 * Vectors kept in memory for brute-force cosine search. Exact, and fast enough for the ~10^4
 * items of a site or a few (one 512-float dot product per item per query: ~5 ms for 10^4);
 * no HNSW library is installed, and an approximate index would only pay off far beyond that.
 */
export class VectorIndex {
  private readonly vectors = new Map<string, Float32Array>();

  constructor(readonly dimensions: number) {}

  get size(): number {
    return this.vectors.size;
  }
  has(id: string): boolean {
    return this.vectors.has(id);
  }
  get(id: string): Float32Array | undefined {
    return this.vectors.get(id);
  }
  set(id: string, vector: ArrayLike<number>): void {
    if (vector.length !== this.dimensions) {
      throw new Error(`vector of ${vector.length} dimensions for an index of ${this.dimensions}`);
    }
    this.vectors.set(id, vector instanceof Float32Array ? vector : Float32Array.from(vector));
  }
  delete(id: string): void {
    this.vectors.delete(id);
  }
  ids(): IterableIterator<string> {
    return this.vectors.keys();
  }

  /** The `k` ids most similar to `query` (unit vectors: dot = cosine) that pass `filter`, best first. */
  search(
    query: Float32Array,
    k: number,
    filter: (id: string) => boolean,
    minScore = 0,
  ): { id: string; score: number }[] {
    const top: { id: string; score: number }[] = [];
    // The local model's query vectors are sparse (a few hashed entries per word): multiply
    // only where the query is not zero. Dense vectors (an API's embeddings) take every entry.
    const nonzero: number[] = [];
    for (let i = 0; i < query.length; i++) if (query[i] !== 0) nonzero.push(i);
    const sparse = nonzero.length * 2 < query.length;
    for (const [id, v] of this.vectors) {
      // the filter (a set lookup) is cheaper than a dot product: ask it first
      if (!filter(id)) continue;
      let dot = 0;
      if (sparse) for (const i of nonzero) dot += v[i]! * query[i]!;
      else for (let i = 0; i < v.length; i++) dot += v[i]! * query[i]!;
      if (dot < minScore || (top.length >= k && dot <= top[top.length - 1]!.score)) continue;
      let j = top.length;
      if (j < k) top.push({ id, score: dot });
      else j = k - 1;
      while (j > 0 && top[j - 1]!.score < dot) {
        top[j] = top[j - 1]!;
        j--;
      }
      top[j] = { id, score: dot };
    }
    return top;
  }

  /** All vectors as one float32 buffer (platform byte order: little-endian on x86 and ARM), in the order of `ids`. */
  serialize(ids: readonly string[]): Buffer {
    const all = new Float32Array(ids.length * this.dimensions);
    ids.forEach((id, n) => {
      const v = this.vectors.get(id);
      if (v) all.set(v, n * this.dimensions);
    });
    return Buffer.from(all.buffer, all.byteOffset, all.byteLength);
  }

  /** Reads what `serialize` wrote. */
  load(ids: readonly string[], buf: Buffer): void {
    if (buf.length !== ids.length * this.dimensions * 4)
      throw new Error('vector file does not match its ids');
    const all = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    ids.forEach((id, n) =>
      this.vectors.set(id, all.subarray(n * this.dimensions, (n + 1) * this.dimensions)),
    );
  }
}

/** Reciprocal-rank fusion: each list adds 1/(k + rank) for the ids it has (rank from 1). */
export function reciprocalRankFusion(
  lists: readonly (readonly string[])[],
  k = 60,
  weights?: readonly number[],
): Map<string, number> {
  const scores = new Map<string, number>();
  lists.forEach((list, li) => {
    const w = weights?.[li] ?? 1;
    list.forEach((id, rank) => scores.set(id, (scores.get(id) ?? 0) + w / (k + rank + 1)));
  });
  return scores;
}
