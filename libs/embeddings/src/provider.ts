export type EmbedKind = 'document' | 'query';

/** Turns texts into vectors: one interface for the local model and any OpenAI-compatible service. */
export interface EmbeddingProvider {
  /** Names the model and its settings; vectors of different ids must not be compared. */
  readonly id: string;
  readonly dimensions: number;
  /**
   * One unit-length vector per text, in order. `kind` lets a model treat search queries apart
   * from stored documents (the local model expands queries); others may ignore it.
   */
  embed(texts: readonly string[], kind?: EmbedKind): Promise<number[][]>;
}

/** Cosine similarity of two vectors of the same length (dot product when both are unit length). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/** Scales a vector to unit length in place (a zero vector stays zero). */
export function normalize<T extends { length: number; [i: number]: number }>(v: T): T {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  n = Math.sqrt(n);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i] = v[i]! / n;
  return v;
}
