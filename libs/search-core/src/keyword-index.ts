import { z } from 'zod';
import { FIELD_BOOSTS, FIELD_NAMES, type ItemFields } from './fields';
import { processTerm, tokenize } from './text';

/**
 * A keyword index over numbered documents, built for many items and cheap queries:
 *
 * - Each posting carries its BM25 term-frequency part already multiplied by the field boosts
 *   (an "impact": Σ over fields of boost × tf·(k1+1)/(tf + k1·(1−b+b·len/avgLen))), computed when
 *   the document is added, so a query only multiplies by the term's idf and adds: no per-document
 *   callback, no per-field lookup, whatever the term's frequency. The counts and field lengths
 *   are kept too: when the average field lengths drift by more than MAX_DRIFT from those the
 *   impacts were computed with, the next query recomputes them all (rarely: the drift needed
 *   grows with the index).
 * - Postings are typed arrays (document number, impact); a query accumulates into one dense
 *   score array and keeps the best `k` with a heap. A filter is a bitset tested inline.
 * - Removal marks the document dead (skipped by queries); `compact` drops dead postings.
 * - Typo tolerance (one edit, terms of 6+ letters) and prefix matching (the query's last term,
 *   4+ letters) look in the term dictionary, bounded by MAX_EXPANSIONS terms each.
 *
 * Documents are numbered by the caller (small dense integers: they index arrays).
 */

const K1 = 1.2;
const B = 0.7;
/** BM25+'s lower bound on a matching term's tf part, so long fields never score zero. */
const DELTA = 0.5;
const FUZZY_WEIGHT = 0.3;
const PREFIX_WEIGHT = 0.4;
const MAX_EXPANSIONS = 32;
/**
 * A term's postings are looked up document by document of a filter when the list is this many
 * times longer than the filter (a lookup is a few steps of a search; a walk, one per posting).
 */
const LOOKUP_FROM = 8;
const FORMAT = 1;

interface Postings {
  docs: Uint32Array;
  /** The term's count in each field, 8 bits each (capped at 255). */
  tfs: Uint32Array;
  impacts: Float32Array;
  length: number;
  /**
   * The last save (serializeParts) that handed the docs and tfs out as they lie, and the
   * impacts: until that save is written (`written`), they are copied before anything writes into
   * their first `length` entries (appends write past them). 0: none.
   */
  sharedIn: number;
  impactsSharedIn: number;
}
/** Field averages may drift this far from those the impacts were computed with before they are recomputed. */
const MAX_DRIFT = 0.1;
const FIELDS = FIELD_NAMES.length;
const BOOSTS = FIELD_NAMES.map((f) => FIELD_BOOSTS[f]);

/** A set of document numbers as bits: the filter every query takes. */
export class DocSet {
  words: Uint32Array;
  constructor(capacity = 0) {
    this.words = new Uint32Array(Math.max(1, Math.ceil(capacity / 32)));
  }
  static of(docs: Iterable<number>, capacity = 0): DocSet {
    const s = new DocSet(capacity);
    for (const d of docs) s.add(d);
    return s;
  }
  has(doc: number): boolean {
    const w = doc >>> 5;
    return w < this.words.length && (this.words[w]! & (1 << (doc & 31))) !== 0;
  }
  add(doc: number): void {
    const w = doc >>> 5;
    if (w >= this.words.length) {
      const next = new Uint32Array(Math.max(w + 1, this.words.length * 2));
      next.set(this.words);
      this.words = next;
    }
    this.words[w]! |= 1 << (doc & 31);
  }
  /** Adds every document of `docs` (a tight loop: value lists of 50k documents pass here). */
  addAll(docs: ArrayLike<number>): void {
    let words = this.words;
    for (let i = 0; i < docs.length; i++) {
      const doc = docs[i]!;
      const w = doc >>> 5;
      if (w >= words.length) {
        this.add(doc);
        words = this.words;
      } else words[w]! |= 1 << (doc & 31);
    }
  }
  delete(doc: number): void {
    const w = doc >>> 5;
    if (w < this.words.length) this.words[w]! &= ~(1 << (doc & 31));
  }
  /** Members, ascending. */
  *[Symbol.iterator](): IterableIterator<number> {
    const words = this.words;
    for (let w = 0; w < words.length; w++) {
      let bits = words[w]!;
      while (bits !== 0) {
        const low = bits & -bits;
        yield (w << 5) + 31 - Math.clz32(low);
        bits ^= low;
      }
    }
  }
  /** Members, ascending, as an array (faster than iterating in hot loops). */
  toArray(): Uint32Array {
    const out = new Uint32Array(this.size);
    const words = this.words;
    let at = 0;
    for (let w = 0; w < words.length; w++) {
      let bits = words[w]!;
      while (bits !== 0) {
        const low = bits & -bits;
        out[at++] = (w << 5) + 31 - Math.clz32(low);
        bits ^= low;
      }
    }
    return out;
  }
  get size(): number {
    let n = 0;
    for (const word of this.words) {
      let v = word - ((word >>> 1) & 0x55555555);
      v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
      n += (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
    }
    return n;
  }
  /** A new set: members of any of `sets`. */
  static union(sets: readonly DocSet[]): DocSet {
    const len = Math.max(1, ...sets.map((s) => s.words.length));
    const out = new DocSet(len * 32);
    for (const s of sets) for (let i = 0; i < s.words.length; i++) out.words[i]! |= s.words[i]!;
    return out;
  }
  /** A new set: members of `a` that are not members of `b`. */
  static difference(a: DocSet, b: DocSet): DocSet {
    const out = new DocSet(a.words.length * 32);
    out.words.set(a.words);
    const len = Math.min(a.words.length, b.words.length);
    for (let i = 0; i < len; i++) out.words[i]! &= ~b.words[i]!;
    return out;
  }
  /** A new set: members of both. */
  static intersection(a: DocSet, b: DocSet): DocSet {
    const len = Math.min(a.words.length, b.words.length);
    const out = new DocSet(len * 32);
    for (let i = 0; i < len; i++) out.words[i] = a.words[i]! & b.words[i]!;
    return out;
  }
}

/** One scored document. */
export interface KeywordHit {
  doc: number;
  score: number;
}

/** Whether `a` and `b` are at most one insertion, deletion or substitution apart. */
export function withinOneEdit(a: string, b: string): boolean {
  const la = a.length;
  const lb = b.length;
  if (Math.abs(la - lb) > 1) return false;
  if (la > lb) return withinOneEdit(b, a);
  let i = 0;
  while (i < la && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === la) return true; // equal, or b has one more at the end
  if (la === lb) return a.slice(i + 1) === b.slice(i + 1); // substitution
  return a.slice(i) === b.slice(i + 1); // insertion into a
}

/** The analyzed terms of one document's fields, with their counts per field. */
export function documentTerms(fields: ItemFields): { terms: Map<string, number[]>; lengths: number[] } {
  const terms = new Map<string, number[]>();
  const lengths: number[] = [];
  FIELD_NAMES.forEach((field, f) => {
    // a field's length is its number of distinct words (as MiniSearch counts it)
    const distinct = new Set<string>();
    for (const value of fields[field]) {
      for (const token of tokenize(value)) {
        distinct.add(token);
        // stopwords are kept in titles, so "Up" can be found
        const term = processTerm(token, field === 'name');
        if (!term) continue;
        let counts = terms.get(term);
        if (!counts) terms.set(term, (counts = FIELD_NAMES.map(() => 0)));
        counts[f]!++;
      }
    }
    lengths.push(distinct.size);
  });
  return { terms, lengths };
}

export class KeywordIndex {
  private readonly termIds = new Map<string, number>();
  private readonly termList: string[] = [];
  private readonly postings: Postings[] = [];
  private readonly alive = new DocSet();
  private live = 0;
  /** Postings of documents no longer alive (removed by `compact`). */
  private dead = 0;
  private readonly fieldLengthSums = FIELD_NAMES.map(() => 0);
  /** Each document's field lengths (16 bits each, capped), FIELDS a document. */
  private lengths = new Uint16Array(0);
  /** The average field lengths the impacts were computed with. */
  private avgUsed: number[] | undefined;
  private stale = false;
  /** Documents with the term, per field (FIELDS a term). */
  private fieldDf = new Uint32Array(0);
  /** The document count and field counts each term's impacts were computed with (1 + FIELDS a term). */
  private basis = new Float32Array(0);
  private matched = new Uint32Array(0);
  /** Terms by length, sorted: prefix and typo lookups (rebuilt after new terms). */
  private sorted: string[] | undefined;
  private byLength: string[][] | undefined;
  private readonly expansionCache = new Map<string, string[]>();
  private scores = new Float32Array(0);
  /** Saves handed out (serializeParts), and the last of them written (`written`). */
  private saves = 0;
  private savesWritten = 0;

  get documentCount(): number {
    return this.live;
  }
  get termCount(): number {
    return this.termList.length;
  }
  has(doc: number): boolean {
    return this.alive.has(doc);
  }

  /** Indexes a document's fields under number `doc` (which must not be alive). */
  add(doc: number, fields: ItemFields): void {
    if (this.alive.has(doc)) throw new Error(`document ${doc} is already indexed`);
    const { terms, lengths } = documentTerms(fields);
    this.live++;
    lengths.forEach((l, f) => (this.fieldLengthSums[f]! += l));
    this.alive.add(doc);
    if ((doc + 1) * FIELDS > this.lengths.length) {
      const next = new Uint16Array(Math.max((doc + 1) * FIELDS, this.lengths.length * 2, 64));
      next.set(this.lengths);
      this.lengths = next;
    }
    lengths.forEach((l, f) => (this.lengths[doc * FIELDS + f] = Math.min(l, 0xffff)));
    const avg = this.averages();
    if (!this.avgUsed) this.avgUsed = avg;
    else if (avg.some((a, f) => Math.abs(a - this.avgUsed![f]!) > MAX_DRIFT * this.avgUsed![f]!))
      this.stale = true;
    for (const [term, counts] of terms) {
      let packed = 0;
      const id = this.termId(term);
      counts.forEach((tf, f) => {
        packed |= Math.min(tf, 255) << (8 * f);
        if (tf > 0) this.fieldDf[id * FIELDS + f]!++;
      });
      this.append(id, doc, packed >>> 0);
    }
  }

  private averages(): number[] {
    return this.fieldLengthSums.map((s) => Math.max(1, s / Math.max(1, this.live)));
  }

  /** A posting's BM25+ score: per field idf × boost × tf part, summed (as MiniSearch scores fields). */
  private impact(doc: number, packed: number, avg: readonly number[], idf: readonly number[]): number {
    let impact = 0;
    for (let f = 0; f < FIELDS; f++) {
      const tf = (packed >>> (8 * f)) & 0xff;
      if (tf === 0) continue;
      const norm = 1 - B + (B * this.lengths[doc * FIELDS + f]!) / avg[f]!;
      impact += idf[f]! * BOOSTS[f]! * ((tf * (K1 + 1)) / (tf + K1 * norm) + DELTA);
    }
    return impact;
  }

  /** Each field's idf of a term now, with the counts recorded as its basis. */
  private idfs(id: number): number[] {
    const n = this.live;
    this.basis[id * (FIELDS + 1)] = n;
    const out: number[] = [];
    for (let f = 0; f < FIELDS; f++) {
      const df = this.fieldDf[id * FIELDS + f]!;
      this.basis[id * (FIELDS + 1) + 1 + f] = df;
      out.push(Math.log(1 + (n - df + 0.5) / (df + 0.5)));
    }
    return out;
  }

  /** Whether the counts moved far from those the term's impacts were computed with. */
  private drifted(id: number): boolean {
    const at = id * (FIELDS + 1);
    const n = this.basis[at]!;
    if (Math.abs(this.live - n) > MAX_DRIFT * n) return true;
    for (let f = 0; f < FIELDS; f++) {
      const used = this.basis[at + 1 + f]!;
      if (Math.abs(this.fieldDf[id * FIELDS + f]! - used) > MAX_DRIFT * used + 1) return true;
    }
    return false;
  }

  /** Recomputes one term's impacts with today's counts. */
  private recompute(id: number, avg: readonly number[]): void {
    const p = this.postings[id]!;
    if (p.impactsSharedIn > this.savesWritten) {
      p.impacts = p.impacts.slice();
      p.impactsSharedIn = 0;
    }
    const idf = this.idfs(id);
    for (let i = 0; i < p.length; i++) p.impacts[i] = this.impact(p.docs[i]!, p.tfs[i]!, avg, idf);
  }

  /** Recomputes every impact with today's average field lengths. */
  private refresh(): void {
    const avg = this.averages();
    for (let id = 0; id < this.postings.length; id++) this.recompute(id, avg);
    this.avgUsed = avg;
    this.stale = false;
  }

  /**
   * Every impact brought up to today's counts now, as the next query would for its terms: a
   * store calls it when it saves, so that after a load (or a restart from what it saved) no
   * query pays for recomputing a common term's postings (142 ms over the first questions at
   * 300k items).
   */
  settle(): void {
    if (this.stale) return this.refresh();
    const avg = this.avgUsed ?? this.averages();
    for (let id = 0; id < this.postings.length; id++) if (this.drifted(id)) this.recompute(id, avg);
  }

  /** Forgets a document (its postings stay until `compact`). */
  remove(doc: number, fields?: ItemFields): void {
    if (!this.alive.has(doc)) return;
    this.alive.delete(doc);
    this.live--;
    if (fields) {
      const { terms, lengths } = documentTerms(fields);
      lengths.forEach((l, f) => (this.fieldLengthSums[f]! = Math.max(0, this.fieldLengthSums[f]! - l)));
      this.dead += terms.size;
      for (const [term, counts] of terms) {
        const id = this.termIds.get(term);
        if (id === undefined) continue;
        counts.forEach((tf, f) => {
          if (tf > 0 && this.fieldDf[id * FIELDS + f]! > 0) this.fieldDf[id * FIELDS + f]!--;
        });
      }
    }
  }

  /** Dead postings as a share of all (a hint for when to `compact`). */
  get deadShare(): number {
    let total = 0;
    for (const p of this.postings) total += p.length;
    return total === 0 ? 0 : this.dead / total;
  }

  /** Drops the postings of removed documents. */
  compact(): void {
    for (const p of this.postings) {
      if (Math.max(p.sharedIn, p.impactsSharedIn) > this.savesWritten) {
        // a save may be writing these: the kept postings go to arrays of their own
        p.docs = p.docs.slice();
        p.tfs = p.tfs.slice();
        p.impacts = p.impacts.slice();
        p.sharedIn = p.impactsSharedIn = 0;
      }
      let w = 0;
      for (let r = 0; r < p.length; r++) {
        const d = p.docs[r]!;
        if (!this.alive.has(d)) continue;
        p.docs[w] = d;
        p.tfs[w] = p.tfs[r]!;
        p.impacts[w] = p.impacts[r]!;
        w++;
      }
      p.length = w;
    }
    this.dead = 0;
  }

  /**
   * The best `k` documents for analyzed query terms (any may match), among `filter` when given.
   * Each term counts by its idf; the last term of 4+ letters also matches as a prefix, terms of
   * 6+ letters also match one edit away (both weaker than the exact term).
   */
  search(terms: readonly string[], k: number, filter?: DocSet): KeywordHit[] {
    // each index term: its weight, and which query terms it stands for (bits)
    const weighted = new Map<number, { weight: number; sources: number }>();
    const want = (term: string, weight: number, source: number): void => {
      const id = this.termIds.get(term);
      if (id === undefined) return;
      const w = weighted.get(id);
      const bit = source < 32 ? 1 << source : 0;
      if (w) {
        w.weight = Math.max(w.weight, weight);
        w.sources |= bit;
      } else weighted.set(id, { weight, sources: bit });
    };
    terms.forEach((term, i) => {
      if (term.length >= 6) for (const t of this.fuzzy(term)) want(t, FUZZY_WEIGHT, i);
      if (i === terms.length - 1 && term.length >= 4)
        for (const t of this.prefixed(term)) want(t, PREFIX_WEIGHT, i);
    });
    terms.forEach((term, i) => want(term, 1, i));
    if (weighted.size === 0 || this.live === 0) return [];
    if (this.stale) this.refresh();
    const avg = this.avgUsed ?? this.averages();
    for (const id of weighted.keys()) if (this.drifted(id)) this.recompute(id, avg);

    const capacity = this.alive.words.length * 32;
    if (this.scores.length < capacity) {
      this.scores = new Float32Array(capacity);
      this.matched = new Uint32Array(capacity);
    }
    const scores = this.scores;
    const matched = this.matched;
    const touched: number[] = [];
    const alive = this.alive.words;
    const allowed = filter?.words;
    // the filter's size (counted once), and its documents, listed when a term's list is much
    // longer than the filter
    let filterSize: number | undefined;
    let filterDocs: Uint32Array | undefined;
    for (const [id, { weight, sources }] of weighted) {
      const p = this.postings[id]!;
      const docs = p.docs;
      const impacts = p.impacts;
      if (filter && p.length > LOOKUP_FROM * (filterSize ??= filter.size)) {
        filterDocs ??= filter.toArray();
        // each of the filter's documents looked up in the list (ascending by document: documents
        // are numbered as they come and added in that order), galloping from the last one found,
        // instead of the whole list walked: the same postings, in the same order
        let at = 0;
        for (let f = 0; f < filterDocs.length && at < p.length; f++) {
          const d = filterDocs[f]!;
          at = firstAtLeast(docs, at, p.length, d);
          if (at >= p.length || docs[at] !== d) continue;
          if ((alive[d >>> 5]! & (1 << (d & 31))) === 0) continue;
          if (matched[d] === 0) touched.push(d);
          matched[d]! |= sources;
          scores[d]! += weight * impacts[at]!;
        }
        continue;
      }
      for (let i = 0; i < p.length; i++) {
        const d = docs[i]!;
        const word = d >>> 5;
        const bit = 1 << (d & 31);
        if ((alive[word]! & bit) === 0) continue;
        if (allowed && (word >= allowed.length || (allowed[word]! & bit) === 0)) continue;
        if (matched[d] === 0) touched.push(d);
        matched[d]! |= sources;
        scores[d]! += weight * impacts[i]!;
      }
    }
    // documents matching more of the query's terms first (MiniSearch's "quality" factor)
    for (const d of touched) scores[d]! *= Math.max(1, popcount(matched[d]!));
    const top = topK(touched, scores, k);
    for (const d of touched) {
      scores[d] = 0;
      matched[d] = 0;
    }
    return top;
  }

  /** The index as bytes: `load` reads it back. */
  serialize(): Buffer {
    return Buffer.concat(this.serializeParts());
  }

  /**
   * `serialize`'s bytes in parts, not joined (at 300k items a joined copy doubled what a save
   * holds). The postings are the index's own arrays, not copied (a copy of them all added 130 MB
   * to a 300k-item store's save): until `written(saveNumber)`, a change copies them before
   * writing where the parts lie (copy on write). The rest is small, and copied.
   */
  serializeParts(): Buffer[] {
    const save = ++this.saves;
    const docs = new Gathered();
    const tfs = new Gathered();
    const impacts = new Gathered();
    for (const p of this.postings) {
      docs.add(p.docs.subarray(0, p.length));
      tfs.add(p.tfs.subarray(0, p.length));
      impacts.add(p.impacts.subarray(0, p.length));
      p.sharedIn = p.impactsSharedIn = save;
    }
    const lengths = new Uint16Array(this.lengths.length + (this.lengths.length % 2));
    lengths.set(this.lengths);
    const sections = [
      Gathered.of(this.alive.words.slice()),
      Gathered.of(lengths),
      docs,
      tfs,
      impacts,
      Gathered.of(this.fieldDf.slice()),
      Gathered.of(this.basis.slice()),
    ];
    const header = Buffer.from(
      JSON.stringify({
        format: FORMAT,
        terms: this.termList,
        postings: this.postings.map((p) => p.length),
        fieldLengthSums: this.fieldLengthSums,
        avgUsed: this.avgUsed ?? null,
        stale: this.stale,
        sections: sections.map((x) => x.byteLength),
      }),
    );
    const parts: Buffer[] = [Buffer.alloc(8), header, Buffer.alloc(pad4(header.length))];
    parts[0]!.writeUInt32LE(FORMAT, 0);
    parts[0]!.writeUInt32LE(header.length, 4);
    for (const x of sections) parts.push(...x.parts());
    return parts;
  }

  /** The number of the last `serializeParts`: pass it to `written` once its parts are written. */
  get saveNumber(): number {
    return this.saves;
  }

  /** The parts of save `save` and of those before it are written (or dropped): no change copies them any more. */
  written(save: number): void {
    this.savesWritten = Math.max(this.savesWritten, save);
  }

  /** Reads what `serialize` wrote; throws on anything else. */
  static load(buf: Buffer): KeywordIndex {
    if (buf.length < 8 || buf.readUInt32LE(0) !== FORMAT) throw new Error('not a keyword index');
    const headerLength = buf.readUInt32LE(4);
    const header = SerializedHeader.parse(JSON.parse(buf.subarray(8, 8 + headerLength).toString('utf8')));
    if (header.terms.length !== header.postings.length || header.sections.length !== 7)
      throw new Error('keyword index header is damaged');
    let at = 8 + headerLength + pad4(headerLength);
    if (buf.length !== at + header.sections.reduce((x, y) => x + y, 0))
      throw new Error('keyword index is truncated');
    // copied into aligned memory: the buffer may sit at any offset of a pooled allocation
    const [alive, lengths, docs, tfs, impacts, fieldDf, basis] = header.sections.map((n) => {
      const out = new ArrayBuffer(n);
      new Uint8Array(out).set(buf.subarray(at, at + n));
      at += n;
      return out;
    }) as [ArrayBuffer, ArrayBuffer, ArrayBuffer, ArrayBuffer, ArrayBuffer, ArrayBuffer, ArrayBuffer];
    const index = new KeywordIndex();
    index.fieldDf = new Uint32Array(fieldDf);
    index.basis = new Float32Array(basis);
    index.alive.words = new Uint32Array(alive);
    index.live = index.alive.size;
    index.lengths = new Uint16Array(lengths);
    const allDocs = new Uint32Array(docs);
    const allTfs = new Uint32Array(tfs);
    const allImpacts = new Float32Array(impacts);
    let offset = 0;
    header.terms.forEach((term, id) => {
      const length = header.postings[id]!;
      index.termIds.set(term, id);
      index.termList.push(term);
      index.postings.push({
        docs: allDocs.subarray(offset, offset + length),
        tfs: allTfs.subarray(offset, offset + length),
        impacts: allImpacts.subarray(offset, offset + length),
        length,
        sharedIn: 0,
        impactsSharedIn: 0,
      });
      offset += length;
    });
    if (offset !== allDocs.length) throw new Error('keyword index postings are damaged');
    header.fieldLengthSums.forEach((x, f) => (index.fieldLengthSums[f] = x));
    if (header.avgUsed) index.avgUsed = header.avgUsed;
    index.stale = header.stale;
    return index;
  }

  private termId(term: string): number {
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.termList.length;
      this.termIds.set(term, id);
      this.termList.push(term);
      this.postings.push({
        docs: new Uint32Array(2),
        tfs: new Uint32Array(2),
        impacts: new Float32Array(2),
        length: 0,
        sharedIn: 0,
        impactsSharedIn: 0,
      });
      if ((id + 1) * FIELDS > this.fieldDf.length) {
        const df = new Uint32Array(Math.max(64, (id + 1) * FIELDS * 2));
        df.set(this.fieldDf);
        this.fieldDf = df;
        const basis = new Float32Array(Math.max(64, (id + 1) * (FIELDS + 1) * 2));
        basis.set(this.basis);
        this.basis = basis;
      }
      this.sorted = undefined;
      this.byLength = undefined;
      this.expansionCache.clear();
    }
    return id;
  }

  private append(id: number, doc: number, packed: number): void {
    const p = this.postings[id]!;
    if (p.length === p.docs.length) {
      // loaded postings are views into one shared buffer: growing copies them out
      // by half (not double): at 300k items doubling left a third of the postings' memory unused
      const size = Math.max(4, Math.ceil(p.length * 1.5));
      const grow = <T extends Uint32Array | Float32Array>(a: T, make: (n: number) => T): T => {
        const next = make(size);
        next.set(a.subarray(0, p.length));
        return next;
      };
      p.docs = grow(p.docs, (n) => new Uint32Array(n));
      p.tfs = grow(p.tfs, (n) => new Uint32Array(n));
      p.impacts = grow(p.impacts, (n) => new Float32Array(n));
      p.sharedIn = p.impactsSharedIn = 0;
    }
    p.docs[p.length] = doc;
    p.tfs[p.length] = packed;
    // the term's other impacts keep their basis until it drifts: only this one uses the counts now
    const at = id * (FIELDS + 1);
    const idf: number[] = [];
    for (let f = 0; f < FIELDS; f++) {
      const n = this.basis[at]! || this.live;
      const df = this.basis[at]! ? this.basis[at + 1 + f]! : this.fieldDf[id * FIELDS + f]!;
      idf.push(Math.log(1 + (n - df + 0.5) / (df + 0.5)));
    }
    p.impacts[p.length] = this.impact(doc, packed, this.avgUsed!, idf);
    p.length++;
  }

  /** Terms starting with `prefix` (not itself), the most frequent first. */
  private prefixed(prefix: string): string[] {
    return this.expansions(`p:${prefix}`, () => {
      const sorted = (this.sorted ??= [...this.termList].sort());
      let lo = 0;
      let hi = sorted.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (sorted[mid]! < prefix) lo = mid + 1;
        else hi = mid;
      }
      const out: string[] = [];
      for (let i = lo; i < sorted.length && sorted[i]!.startsWith(prefix); i++)
        if (sorted[i] !== prefix) out.push(sorted[i]!);
      return out;
    });
  }

  /** Terms one edit from `term` (not itself), the most frequent first. */
  private fuzzy(term: string): string[] {
    return this.expansions(`f:${term}`, () => {
      if (!this.byLength) {
        this.byLength = [];
        for (const t of this.termList) (this.byLength[t.length] ??= []).push(t);
      }
      const out: string[] = [];
      for (let len = term.length - 1; len <= term.length + 1; len++)
        for (const t of this.byLength[len] ?? []) if (t !== term && withinOneEdit(term, t)) out.push(t);
      return out;
    });
  }

  private expansions(key: string, find: () => string[]): string[] {
    let hit = this.expansionCache.get(key);
    if (!hit) {
      const df = (t: string): number => this.postings[this.termIds.get(t)!]!.length;
      hit = find()
        .sort((a, b) => df(b) - df(a))
        .slice(0, MAX_EXPANSIONS);
      if (this.expansionCache.size > 10_000) this.expansionCache.clear();
      this.expansionCache.set(key, hit);
    }
    return hit;
  }
}

function popcount(word: number): number {
  let v = word - ((word >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

const pad4 = (n: number): number => (4 - (n % 4)) % 4;

/** Views of at least this many bytes are written as they lie; smaller ones are copied into chunks. */
const VIEW_FROM = 64 * 1024;
const CHUNK_BYTES = 1 << 20;

/**
 * One section's bytes from many typed arrays, in order, without one copy of them all: large
 * arrays as views, small ones (most terms' postings) gathered into chunks of about a megabyte,
 * so a section of 100k terms is not 100k buffers.
 */
class Gathered {
  private readonly out: Buffer[] = [];
  private chunk: Buffer | undefined;
  /** The chunk's bytes from `start` to `used` are not in `out` yet. */
  private start = 0;
  private used = 0;
  byteLength = 0;

  static of(x: Uint16Array | Uint32Array | Float32Array): Gathered {
    const g = new Gathered();
    g.add(x);
    return g;
  }

  add(x: Uint16Array | Uint32Array | Float32Array): void {
    const bytes = Buffer.from(x.buffer, x.byteOffset, x.byteLength);
    this.byteLength += bytes.length;
    if (bytes.length >= VIEW_FROM) {
      // the chunk's bytes so far go first; what is left of it takes the next small ones
      this.flush();
      this.out.push(bytes);
      return;
    }
    if (!this.chunk || this.used + bytes.length > this.chunk.length) {
      this.flush();
      this.chunk = Buffer.allocUnsafe(CHUNK_BYTES);
      this.start = this.used = 0;
    }
    bytes.copy(this.chunk, this.used);
    this.used += bytes.length;
  }

  parts(): Buffer[] {
    this.flush();
    return this.out;
  }

  private flush(): void {
    if (this.chunk && this.used > this.start) this.out.push(this.chunk.subarray(this.start, this.used));
    this.start = this.used;
  }
}

const SerializedHeader = z.object({
  terms: z.array(z.string()),
  postings: z.array(z.number().int().nonnegative()),
  fieldLengthSums: z.array(z.number()),
  avgUsed: z.array(z.number()).nullable(),
  stale: z.boolean().default(false),
  sections: z.array(z.number().int().nonnegative()),
});

/**
 * The first position from `from` on whose document is `d` or after it (`length` when none), in
 * a list ascending by document: steps doubling from `from`, then a binary search within the last.
 */
function firstAtLeast(docs: Uint32Array, from: number, length: number, d: number): number {
  if (from >= length || docs[from]! >= d) return from;
  let below = from; // docs[below] < d
  let step = 1;
  let hi = from + 1;
  while (hi < length && docs[hi]! < d) {
    below = hi;
    step *= 2;
    hi = below + step;
  }
  if (hi > length) hi = length;
  let lo = below + 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (docs[mid]! < d) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The `k` best of `docs` by `scores`, best first (ties: lower number first). */
function topK(docs: readonly number[], scores: Float32Array, k: number): KeywordHit[] {
  if (k <= 0) return [];
  // a min-heap of the best k so far
  const heap: number[] = [];
  const worse = (a: number, b: number): boolean =>
    scores[a]! < scores[b]! || (scores[a] === scores[b] && a > b);
  const down = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && worse(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && worse(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  for (const d of docs) {
    if (heap.length < k) {
      heap.push(d);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (!worse(heap[i]!, heap[parent]!)) break;
        [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
        i = parent;
      }
    } else if (worse(heap[0]!, d)) {
      heap[0] = d;
      down(0);
    }
  }
  return heap.sort((a, b) => scores[b]! - scores[a]! || a - b).map((doc) => ({ doc, score: scores[doc]! }));
}
