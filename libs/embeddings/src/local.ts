import { STOPWORDS, stem, tokenize } from '@askbus/search-core';
import { normalize, type EmbedKind, type EmbeddingProvider } from './provider';
import { WordNet } from './wordnet';

/** A vocabulary's counts as plain data. */
export interface VocabularySnapshot {
  docs: number;
  changes: number;
  counts: Array<[string, number]>;
  categories: Array<[string, number]>;
}

/** Document frequencies of (stemmed) words in the loaded data. */
export class Vocabulary {
  private readonly counts = new Map<string, number>();
  private readonly categoryCounts = new Map<string, number>();
  private docs = 0;
  private changes = 0;

  /**
   * Counts one document's distinct words (call once per stored item); `categories` is the text
   * of its classifying fields (types, genre, keywords …), whose words make the best expansions.
   */
  observe(text: string, categories = ''): void {
    this.docs++;
    this.changes++;
    bump(this.counts, text, 1);
    bump(this.categoryCounts, categories, 1);
  }
  /** Undoes `observe` for a removed or replaced document. */
  forget(text: string, categories = ''): void {
    this.docs = Math.max(0, this.docs - 1);
    this.changes++;
    bump(this.counts, text, -1);
    bump(this.categoryCounts, categories, -1);
  }
  /** The counts as plain data (JSON-safe): `restore` reads them back. */
  snapshot(): VocabularySnapshot {
    return {
      docs: this.docs,
      changes: this.changes,
      counts: [...this.counts],
      categories: [...this.categoryCounts],
    };
  }
  /** Replaces the counts with a snapshot's. */
  restore(s: VocabularySnapshot): void {
    this.counts.clear();
    this.categoryCounts.clear();
    for (const [w, n] of s.counts) this.counts.set(w, n);
    for (const [w, n] of s.categories) this.categoryCounts.set(w, n);
    this.docs = s.docs;
    this.changes = s.changes + 1;
  }
  df(stemmed: string): number {
    return this.counts.get(stemmed) ?? 0;
  }
  /** In how many documents the word classifies the document (genre, type, keyword). */
  categoryDf(stemmed: string): number {
    return this.categoryCounts.get(stemmed) ?? 0;
  }
  get documents(): number {
    return this.docs;
  }
  /** Grows with every change, so what was derived from the counts knows when it is stale. */
  get version(): number {
    return this.changes;
  }
}

function bump(counts: Map<string, number>, text: string, by: number): void {
  for (const s of new Set(contentTokens(text).map(stem))) {
    const n = (counts.get(s) ?? 0) + by;
    if (n > 0) counts.set(s, n);
    else counts.delete(s);
  }
}

/** Lowercase word tokens of a text without stopwords, numbers and one-letter tokens. */
export function contentTokens(text: string): string[] {
  return tokenize(text).filter((t) => t.length > 1 && !STOPWORDS.has(t) && !/^\d+$/.test(t));
}

export interface LocalEmbeddingOptions {
  /** Vector length (default 512). */
  dimensions?: number;
  /** The loaded data's words: query words are expanded only to words the data has. */
  vocabulary?: Vocabulary;
  /** Expansion words per query word (default 8). */
  expansions?: number;
  /** Total weight of a query word's expansions relative to the word itself (default 0.9). */
  expansionWeight?: number;
  wordnet?: WordNet;
}

/** Bump when document vectors change: stored vectors of another version are recomputed. */
export const LOCAL_EMBEDDING_VERSION = 2;
const INDEX_NONZEROS = 8;
/** Words whose expansions are kept; a bound, so odd queries cannot grow memory for ever. */
const EXPANSION_CACHE_SIZE = 20_000;
const MAX_SENSES = 6;
const MAX_MENTIONS = 80;
const MAX_TOKENS = 256;
const NON_CATEGORY_FACTOR = 0.1;
const MENTION_WEIGHT = 0.6;
const SPREAD_STEPS = 3;
const MAX_RAISE = 5;
const RARE_DF = 5;
const SPREAD_WIDTH = 40;
const HYPONYM_WEIGHT = 0.5;
/** How much activation passes along each WordNet pointer (hyponyms: HYPONYM_WEIGHT, shared). */
const EDGE_WEIGHTS: Record<string, number> = { '@': 0.6, '@i': 0.6, '&': 0.7, '+': 0.6, '=': 0.5, '^': 0.5 };

/** 32-bit FNV-1a with a seed. */
function hash(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * An offline embedding from the data's own words and WordNet (no download, no training).
 *
 * Documents: each (stemmed) word has a fixed sparse random index vector (8 of `dimensions`
 * entries ±1, from a hash: random indexing); a document is the normalized, sublinearly weighted
 * sum of its words' vectors — so document vectors never depend on what else is loaded, and
 * stored vectors stay valid.
 *
 * Queries: each word is also expanded through WordNet — the synonyms, glosses and related
 * synsets (hypernyms, similar adjectives, derivations) of its senses, and the synsets whose
 * glosses mention it — keeping only expansion words that occur in the loaded data (the
 * `vocabulary`), the best few by WordNet weight × rarity in the data. So "cowboy" reaches
 * "western" (the Western saddle is "used by cowboys") and "frightening" reaches "horror"
 * (via "fear"), though neither query word is in the data. Far weaker than a neural model.
 */
export class LocalEmbeddings implements EmbeddingProvider {
  readonly dimensions: number;
  readonly id: string;
  /** WordNet, read on the first query that expands a word (documents never need it). */
  private wordnet: WordNet | undefined;
  private readonly vocabulary: Vocabulary | undefined;
  private readonly expansionCache = new Map<string, [string, number][]>();
  private expansionsAt = -1;
  private readonly expansions: number;
  private readonly expansionWeight: number;
  private readonly indexCache = new Map<string, Int32Array>();

  constructor(opts: LocalEmbeddingOptions = {}) {
    this.dimensions = opts.dimensions ?? 512;
    this.wordnet = opts.wordnet;
    this.vocabulary = opts.vocabulary;
    this.expansions = opts.expansions ?? 8;
    this.expansionWeight = opts.expansionWeight ?? 0.9;
    this.id = `local-wordnet-ri/v${LOCAL_EMBEDDING_VERSION}/d${this.dimensions}`;
  }

  /** The word net, loaded on first use: opening a store and embedding documents do not load it. */
  private get wn(): WordNet {
    return (this.wordnet ??= WordNet.get());
  }

  async embed(texts: readonly string[], kind: EmbedKind = 'document'): Promise<number[][]> {
    return texts.map((t) => Array.from(kind === 'query' ? this.embedQuery(t) : this.embedDocument(t)));
  }

  embedDocument(text: string): Float32Array {
    const v = new Float32Array(this.dimensions);
    const counts = new Map<string, number>();
    for (const token of contentTokens(text)) {
      const s = stem(token);
      counts.set(s, (counts.get(s) ?? 0) + 1);
      if (counts.size >= MAX_TOKENS) break;
    }
    for (const [s, count] of counts) this.addIndex(v, s, 1 + Math.log(count));
    return normalize(v);
  }

  embedQuery(text: string): Float32Array {
    const v = new Float32Array(this.dimensions);
    const seen = new Set<string>();
    for (const token of contentTokens(text)) {
      const s = stem(token);
      if (seen.has(s)) continue;
      seen.add(s);
      // a word every item has ("movie" on a movie site) tells items apart no better than none
      this.addIndex(v, s, this.rarity(s));
      for (const [word, weight] of this.expand(token)) this.addIndex(v, word, weight);
    }
    return normalize(v);
  }

  /**
   * The data words a query word leads to through WordNet, as (stem, weight); empty without a
   * vocabulary. Each weight is `expansionWeight` × its score (≤ 1), so weak links stay weak.
   */
  expand(token: string): [string, number][] {
    const vocab = this.vocabulary;
    if (!vocab || vocab.documents === 0) return [];
    // A word's expansion depends only on the word and the counts: keep it until they change.
    if (this.expansionsAt !== vocab.version) {
      this.expansionCache.clear();
      this.expansionsAt = vocab.version;
    }
    let cached = this.expansionCache.get(token);
    if (!cached) {
      cached = this.spread(token, vocab);
      if (this.expansionCache.size >= EXPANSION_CACHE_SIZE) this.expansionCache.clear();
      this.expansionCache.set(token, cached);
    }
    return cached;
  }

  private spread(token: string, vocab: Vocabulary): [string, number][] {
    const own = stem(token);
    // spreading activation over WordNet: the word's senses (by frequency rank) and the synsets
    // whose glosses mention it ("an ornamented saddle used by cowboys"), then up to three
    // steps along hypernym, hyponym, similar-to, derivation, attribute and see-also pointers
    const act = new Map<string, number>();
    const raise = (id: string, a: number): boolean => {
      if (a <= (act.get(id) ?? 0)) return false;
      act.set(id, a);
      return true;
    };
    const forms = this.wn.lemmaForms(token);
    forms
      .flatMap((f) => this.wn.senses(f))
      .slice(0, MAX_SENSES)
      .forEach((id, rank) => raise(id, 1 / (1 + rank) ** 1.5));
    const mentions = new Set<string>();
    for (const f of new Set([token, ...forms, ...forms.map((x) => `${x}s`)])) {
      for (const id of this.wn.glossesWith(f).slice(0, MAX_MENTIONS)) mentions.add(id);
    }
    for (const id of mentions) raise(id, MENTION_WEIGHT / Math.sqrt(Math.max(1, mentions.size / 4)));
    let frontier = [...act.keys()];
    for (let step = 0; step < SPREAD_STEPS && frontier.length; step++) {
      const next: string[] = [];
      for (const id of frontier.sort((x, y) => act.get(y)! - act.get(x)!).slice(0, SPREAD_WIDTH)) {
        const s = this.wn.synset(id);
        if (!s) continue;
        const a = act.get(id)!;
        const hyponyms = s.pointers.filter((p) => p.symbol === '~' || p.symbol === '~i').length;
        for (const p of s.pointers) {
          const edge =
            EDGE_WEIGHTS[p.symbol] ??
            (p.symbol === '~' || p.symbol === '~i'
              ? HYPONYM_WEIGHT / Math.sqrt(Math.max(1, hyponyms / 3))
              : 0);
          if (edge > 0 && raise(p.id, a * edge)) next.push(p.id);
        }
      }
      frontier = next;
    }
    const score = new Map<string, number>();
    for (const [id, a] of act) {
      const s = this.wn.synset(id);
      if (!s) continue;
      for (const w of s.lemmas.flatMap((l) => l.split(' '))) {
        if (w.length < 3 || STOPWORDS.has(w)) continue;
        const st = stem(w);
        if (st === own || vocab.df(st) === 0) continue;
        // words that classify items (genres, types, keywords) are what a vague word is after
        const v = a * (vocab.categoryDf(st) > 0 ? 1 : NON_CATEGORY_FACTOR) * this.rarity(st);
        if (v > (score.get(st) ?? 0)) score.set(st, v);
      }
    }
    const ranked = [...score.entries()].sort((x, y) => y[1] - x[1]).slice(0, this.expansions);
    // A word the data lacks (or has in under RARE_DF items) stands in by its best neighbours in the data (raised so the best
    // counts like a word, at most MAX_RAISE times: weak links stay weak). A word the data has
    // keeps its neighbours as a hint, scaled by its rarity: "movie" on a movie site leads nowhere.
    const best = ranked[0]?.[1] ?? 0;
    const lift = Math.min(MAX_RAISE, best > 0 ? 1 / best : 1);
    const df = vocab.df(own);
    const factor = df < RARE_DF ? Math.max(this.rarity(own), lift * (1 - df / RARE_DF)) : this.rarity(own);
    return ranked.map(([st, w]) => [st, this.expansionWeight * Math.min(1, w * factor)]);
  }

  /** 1 for words the data lacks or rarely has, towards 0 for words in every item (needs a vocabulary). */
  private rarity(stemmed: string): number {
    const vocab = this.vocabulary;
    if (!vocab || vocab.documents === 0) return 1;
    const df = vocab.df(stemmed);
    if (df === 0) return 1;
    return Math.min(1, Math.log(vocab.documents / df) / Math.log(1 + vocab.documents / 10));
  }

  private indexOf(key: string): Int32Array {
    let idx = this.indexCache.get(key);
    if (!idx) {
      idx = new Int32Array(INDEX_NONZEROS);
      for (let k = 0; k < INDEX_NONZEROS; k++) {
        const h = hash(key, k + 1);
        idx[k] = (h & 0x80000000 ? -1 : 1) * ((h % this.dimensions) + 1);
      }
      if (this.indexCache.size > 200_000) this.indexCache.clear();
      this.indexCache.set(key, idx);
    }
    return idx;
  }

  private addIndex(v: Float32Array, key: string, weight: number): void {
    const w = weight / Math.sqrt(INDEX_NONZEROS);
    for (const p of this.indexOf(key)) {
      const i = Math.abs(p) - 1;
      v[i] = v[i]! + (p > 0 ? w : -w);
    }
  }
}
