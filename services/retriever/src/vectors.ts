import usearch from 'usearch';
import { DocSet } from '@askbus/search-core';
import { siftDown, siftUp } from './min-heap';
import { DotKernel } from './simd-dots';

const { Index } = usearch;
type AnnIndex = InstanceType<typeof Index>;

/** HNSW graph shape: links per node, candidates kept while adding and while searching. */
const CONNECTIVITY = 32;
const EXPANSION_ADD = 128;
const EXPANSION_SEARCH = 512;
/** The graph returns this many times `k` candidates, rescored exactly from the stored codes. */
const OVERSAMPLE = 8;
/** A filter this small (or this share of the vectors) is scanned exactly: no graph walk. */
const EXACT_BELOW = 4_000;
const EXACT_SHARE = 0.25;
/** Exact scans of this many vectors or more use the SIMD kernel (fewer: its set-up is not worth it). */
const SIMD_SCAN_FROM = 64;
/**
 * A walk whose candidates were too few in the filter for k is repeated (at most RETRIES times)
 * for RETRY_MARGIN × as many as the share in the filter requires, unless that is over
 * RETRY_MAX_SHARE of the filter's vectors: then the exact scan is cheaper than so wide a walk.
 */
const RETRIES = 2;
const RETRY_MARGIN = 2;
const RETRY_MAX_SHARE = 0.03;
const THREADS = 2;
/** Vectors added to the graph in one call. */
const PENDING_BATCH = 2_048;
/**
 * The codes are held in chunks of this many documents (a power of two): they grow a chunk at a
 * time, without the copy and slack of one array grown 1.5× (at 300k items 459 MB held for 307
 * used, and old and new side by side while growing), and a snapshot shares them chunk by chunk.
 */
const CHUNK_SHIFT = 12;
const CHUNK_DOCS = 1 << CHUNK_SHIFT;
const CHUNK_MASK = CHUNK_DOCS - 1;

/**
 * Vectors for cosine search over numbered documents (unit vectors: dot = cosine):
 *
 * - an approximate nearest-neighbour graph (usearch's HNSW, 8-bit), persisted as usearch's own
 *   file and loaded without rebuilding;
 * - beside it each vector as 16-bit codes with its own scale (2 bytes a dimension, half of
 *   float32; 8 bits moved the ranks of near ties), from which the graph's candidates are rescored, and small filtered
 *   sets (a site, a structured search's candidates) are scanned exactly.
 */
export class VectorIndex {
  private ann: AnnIndex;
  /** The graph file `ann` is a read-only view of (mapped, not read into memory), until it must change. */
  private viewed: string | undefined;
  /** Document d's codes: `chunks[d >> CHUNK_SHIFT]` from `(d & CHUNK_MASK) * dimensions`. */
  private chunks: Int16Array[] = [];
  private scales: Float32Array;
  /**
   * The chunks a `save` handed out as they are (not copied), each with the documents of it a
   * snapshot covers: a snapshot may still be writing them, so a covered document's codes change
   * only after its chunk is copied (copy on write; a load only adds documents past them, so none
   * is copied then). Kept across saves (one snapshot may be captured while the one before is
   * still written); a chunk leaves once copied.
   */
  private shared = new Map<Int16Array, number>();
  private readonly present = new DocSet();
  /** Documents in the graph; the others wait in `pending` (scanned exactly until added in bulk). */
  private inGraph = new DocSet();
  private pending: number[] = [];
  private count = 0;
  /** Changes made to the graph so far (adds, removals): tells whether a saved file still holds it. */
  private graphEdits = 0;
  /** The SIMD scan's kernel, made on the first scan that uses it (null: it cannot run here). */
  private kernel: DotKernel | null | undefined;

  constructor(readonly dimensions: number) {
    this.ann = newAnn(dimensions);
    this.scales = new Float32Array(0);
  }

  get size(): number {
    return this.count;
  }
  has(doc: number): boolean {
    return this.present.has(doc);
  }
  /** Document numbers that have a vector. */
  docs(): Iterable<number> {
    return this.present;
  }

  set(doc: number, vector: ArrayLike<number>): void {
    this.setMany([doc], [vector]);
  }

  /**
   * Adds or replaces vectors. The codes at once; the graph in bulk, PENDING_BATCH at a time and
   * only once the index is larger than an exact scan handles (small loads never pay for it).
   */
  setMany(docs: readonly number[], vectors: readonly ArrayLike<number>[]): void {
    if (docs.length === 0) return;
    const replaced: bigint[] = [];
    docs.forEach((doc, n) => {
      const v = vectors[n]!;
      if (v.length !== this.dimensions)
        throw new Error(`vector of ${v.length} dimensions for an index of ${this.dimensions}`);
      const f = v instanceof Float32Array ? v : Float32Array.from(v);
      if (this.inGraph.has(doc)) {
        replaced.push(BigInt(doc));
        this.inGraph.delete(doc);
      }
      if (!this.present.has(doc)) this.count++;
      this.encode(doc, f);
      this.present.add(doc);
      this.pending.push(doc);
    });
    if (replaced.length) {
      this.writable().remove(replaced);
      this.graphEdits++;
    }
    if (this.count > EXACT_BELOW && this.pending.length >= PENDING_BATCH) this.flush();
  }

  delete(doc: number): void {
    if (!this.present.has(doc)) return;
    this.present.delete(doc);
    this.count--;
    if (this.inGraph.has(doc)) {
      this.inGraph.delete(doc);
      this.writable().remove(BigInt(doc));
      this.graphEdits++;
    }
  }

  /** Adds the pending vectors to the graph (decoded from their codes), in one call. */
  private flush(): void {
    const docs = [...new Set(this.pending)].filter((d) => this.present.has(d) && !this.inGraph.has(d));
    this.pending = [];
    if (docs.length === 0) return;
    const floats = docs.map((doc) => {
      const v = new Float32Array(this.dimensions);
      const codes = this.chunks[doc >> CHUNK_SHIFT]!;
      const base = (doc & CHUNK_MASK) * this.dimensions;
      for (let i = 0; i < this.dimensions; i++) v[i] = codes[base + i]!;
      return fullRange(v);
    });
    this.writable().add(BigUint64Array.from(docs.map(BigInt)), floats, THREADS);
    this.graphEdits++;
    for (const d of docs) this.inGraph.add(d);
  }

  /** The cosine of a stored vector with `query`, from its codes. */
  private dot(doc: number, query: Float32Array, nonzero: readonly number[] | undefined): number {
    const codes = this.chunks[doc >> CHUNK_SHIFT]!;
    const base = (doc & CHUNK_MASK) * this.dimensions;
    let dot = 0;
    if (nonzero) for (const i of nonzero) dot += codes[base + i]! * query[i]!;
    else for (let i = 0; i < this.dimensions; i++) dot += codes[base + i]! * query[i]!;
    return dot * this.scales[doc]!;
  }

  /**
   * The `k` documents most similar to `query` among `filter` (all when undefined) with a cosine
   * of at least `minScore`, best first: the graph for large sets, an exact scan for small ones
   * (`graphAlways`: the graph whatever the size, to measure it).
   */
  search(
    query: Float32Array,
    k: number,
    filter?: DocSet,
    minScore = 0,
    graphAlways = false,
  ): { doc: number; score: number }[] {
    if (this.count === 0 || k <= 0) return [];
    const allowed = filter ? filter.size : this.count;
    if (!graphAlways && (allowed <= EXACT_BELOW || allowed <= this.count * EXACT_SHARE)) {
      return this.exactSearch(query, k, filter, minScore);
    }
    this.flush();
    const scaledQuery = fullRange(query);
    const nonzero = sparseEntries(query);
    // the graph knows no filter: ask for as many more as the filter is likely to reject, judged
    // first by its share of all vectors; but the neighbourhood of a query may lie mostly outside
    // the filter (another site's items), so a walk whose candidates were too few in the filter is
    // asked again as wide as the share found in it requires, and the exact scan answers once that
    // is a large part of the filter. Candidates in the filter but under minScore end it: the walk
    // has gone past the items close enough.
    let want = Math.min(this.count, Math.ceil((k * OVERSAMPLE) / (allowed / this.count)));
    for (let pass = 0; ; pass++) {
      const { hits, inFilter } = this.graphPass(scaledQuery, query, nonzero, want, filter, minScore);
      if (hits.length >= k || inFilter >= k || want >= this.count) return hits.slice(0, k);
      const next = Math.max(want * 2, Math.ceil((k * RETRY_MARGIN * want) / Math.max(inFilter, 1)));
      if (pass >= RETRIES || next > allowed * RETRY_MAX_SHARE)
        return this.exactSearch(query, k, filter, minScore);
      want = next;
    }
  }

  /** One walk of the graph for `want` candidates: those in `filter` rescored from their codes, and how many were in it. */
  private graphPass(
    scaledQuery: Float32Array,
    query: Float32Array,
    nonzero: readonly number[] | undefined,
    want: number,
    filter: DocSet | undefined,
    minScore: number,
  ): { hits: { doc: number; score: number }[]; inFilter: number } {
    const found = this.ann.search(scaledQuery, want, 1);
    const hits: { doc: number; score: number }[] = [];
    let inFilter = 0;
    for (const key of found.keys) {
      const doc = Number(key);
      if (!this.present.has(doc) || (filter && !filter.has(doc))) continue;
      inFilter++;
      const score = this.dot(doc, query, nonzero);
      if (score >= minScore) hits.push({ doc, score });
    }
    hits.sort((a, b) => b.score - a.score || a.doc - b.doc);
    return { hits, inFilter };
  }

  /**
   * The exact answer: every vector of `filter` (or all) compared with `query`. Sets of
   * SIMD_SCAN_FROM vectors or more are scanned by the SIMD kernel (`simd: false`: never).
   */
  exactSearch(
    query: Float32Array,
    k: number,
    filter?: DocSet,
    minScore = 0,
    { simd = true }: { simd?: boolean } = {},
  ): { doc: number; score: number }[] {
    if (k <= 0) return [];
    const docs = (filter ?? this.present).toArray();
    const kernel = simd && docs.length >= SIMD_SCAN_FROM ? this.dotKernel() : undefined;
    return kernel
      ? this.kernelScan(kernel, query, k, docs, filter !== undefined, minScore)
      : this.plainScan(query, k, docs, filter !== undefined, minScore);
  }

  /** The exact scan in JavaScript: each document's codes times the query's non-zero entries. */
  private plainScan(
    query: Float32Array,
    k: number,
    docs: Uint32Array,
    checkPresent: boolean,
    minScore: number,
  ): { doc: number; score: number }[] {
    // the query's entries that count (all of a dense one) as two typed arrays: a tight loop
    // over the codes
    const nonzero = sparseEntries(query);
    const at = Int32Array.from(nonzero ?? query.keys());
    const q = Float32Array.from(at, (i) => query[i]!);
    const chunks = this.chunks;
    const scales = this.scales;
    const dims = this.dimensions;
    const m = at.length;
    const top: { doc: number; score: number }[] = [];
    let worst = -Infinity;
    for (let d = 0; d < docs.length; d++) {
      const doc = docs[d]!;
      if (checkPresent && !this.present.has(doc)) continue;
      const codes = chunks[doc >> CHUNK_SHIFT]!;
      const base = (doc & CHUNK_MASK) * dims;
      let dot = 0;
      for (let j = 0; j < m; j++) dot += codes[base + at[j]!]! * q[j]!;
      dot *= scales[doc]!;
      if (dot < minScore || (top.length >= k && dot <= worst)) continue;
      let j = top.length;
      if (j < k) top.push({ doc, score: dot });
      else j = k - 1;
      while (j > 0 && top[j - 1]!.score < dot) {
        top[j] = top[j - 1]!;
        j--;
      }
      top[j] = { doc, score: dot };
      if (top.length >= k) worst = top[k - 1]!.score;
    }
    return top;
  }

  /**
   * The exact scan with the SIMD kernel, and the same answer as `plainScan`. The kernel needs
   * the query as 16-bit codes too, so its dot products are off the exact ones by at most a
   * bound worked out per document (below); a document whose score, at the top of its bound, is
   * under the k-th best bottom of a bound cannot be among the k best. The rest (k and the near
   * ties at the cut) are scored again exactly, as `plainScan` scores them.
   */
  private kernelScan(
    kernel: DotKernel,
    query: Float32Array,
    k: number,
    docs: Uint32Array,
    checkPresent: boolean,
    minScore: number,
  ): { doc: number; score: number }[] {
    const dims = this.dimensions;
    let qmax = 0;
    for (let i = 0; i < dims; i++) qmax = Math.max(qmax, Math.abs(query[i]!));
    if (qmax === 0) return this.plainScan(query, k, docs, checkPresent, minScore);
    // the query as codes of scale qScale; the error of the kernel's sum (in cosine) is at most
    // |v|·|e| (Cauchy–Schwarz; e the query's rounding errors) plus the f32 sums' rounding, a few
    // units of 2^-24 of |v|·|q| for each of the dims/8 additions (taken 4× over); |v| is at most
    // √dims · (its largest entry) = √dims · 32767 · its scale
    const qScale = qmax / 32767;
    let errors = 0;
    let norm = 0;
    for (let i = 0; i < dims; i++) {
      const code = Math.round(query[i]! / qScale);
      kernel.query[i] = code;
      const e = query[i]! - code * qScale;
      errors += e * e;
      norm += query[i]! * query[i]!;
    }
    const slack = 32767 * Math.sqrt(dims) * (Math.sqrt(errors) + (dims / 8 + 4) * 2 ** -22 * Math.sqrt(norm));
    const chunks = this.chunks;
    const scales = this.scales;
    const present = this.present;
    const capacity = kernel.capacity;
    const rowDocs = new Uint32Array(capacity);
    // the k best lower bounds so far, as a min-heap (bottoms[0] the k-th best once there are
    // k): k is the search's depth, 200 for a question's text ranks
    const bottoms = new Float64Array(Math.min(k, docs.length));
    let held = 0;
    let cut = -Infinity;
    const candidates: number[] = [];
    const candidateTops: number[] = [];
    const score = (count: number): void => {
      const dots = kernel.dots(count);
      for (let r = 0; r < count; r++) {
        const doc = rowDocs[r]!;
        const scale = scales[doc]!;
        const approx = dots[r]! * qScale * scale;
        const margin = slack * scale;
        const top = approx + margin;
        if (top < minScore || top < cut) continue;
        candidates.push(doc);
        candidateTops.push(top);
        const bottom = approx - margin;
        if (held < bottoms.length) {
          siftUp(bottoms, held++, bottom);
          if (held === k) cut = bottoms[0]!;
        } else if (bottom > cut) {
          siftDown(bottoms, held, 0, bottom);
          cut = bottoms[0]!;
        }
      }
    };
    let rows = 0;
    for (let i = 0; i < docs.length;) {
      const doc = docs[i]!;
      if (checkPresent && !present.has(doc)) {
        i++;
        continue;
      }
      // a run of consecutive documents of one chunk is one copy
      const last = Math.min(doc | CHUNK_MASK, doc + capacity - rows - 1);
      let j = i + 1;
      while (j < docs.length && docs[j] === docs[j - 1]! + 1 && docs[j]! <= last) {
        if (checkPresent && !present.has(docs[j]!)) break;
        j++;
      }
      const base = (doc & CHUNK_MASK) * dims;
      kernel.rows.set(chunks[doc >> CHUNK_SHIFT]!.subarray(base, base + (j - i) * dims), rows * dims);
      for (; i < j; i++) rowDocs[rows++] = docs[i]!;
      if (rows === capacity) {
        score(rows);
        rows = 0;
      }
    }
    if (rows > 0) score(rows);
    const nonzero = sparseEntries(query);
    const hits: { doc: number; score: number }[] = [];
    for (let c = 0; c < candidates.length; c++) {
      if (candidateTops[c]! < cut) continue;
      const doc = candidates[c]!;
      const exact = this.dot(doc, query, nonzero);
      if (exact >= minScore) hits.push({ doc, score: exact });
    }
    hits.sort((a, b) => b.score - a.score || a.doc - b.doc);
    return hits.slice(0, k);
  }

  private dotKernel(): DotKernel | undefined {
    if (this.kernel === undefined) this.kernel = DotKernel.create(this.dimensions) ?? null;
    return this.kernel ?? undefined;
  }

  /**
   * The graph to `graphPath` (usearch's format); the codes file's bytes returned in parts, in
   * order (not joined: at 300k items the codes alone are 300 MB, and a joined copy of them
   * raised a snapshot's peak by as much).
   */
  save(graphPath: string): Buffer[] {
    this.flush();
    this.writable().save(graphPath);
    const docs = Uint32Array.from(this.present);
    const header = Buffer.alloc(12);
    header.writeUInt32LE(1, 0);
    header.writeUInt32LE(this.dimensions, 4);
    header.writeUInt32LE(docs.length, 8);
    const scales = new Float32Array(docs.length);
    docs.forEach((doc, n) => (scales[n] = this.scales[doc]!));
    // documents 0…n−1 in order (a load without replacements): the chunks as they lie, shared
    if (docs.every((doc, n) => doc === n)) {
      const chunks = this.chunks.slice(0, Math.ceil(docs.length / CHUNK_DOCS));
      const parts = chunks.map((chunk, c) => {
        const rows = Math.min(CHUNK_DOCS, docs.length - c * CHUNK_DOCS);
        this.shared.set(chunk, Math.max(rows, this.shared.get(chunk) ?? 0));
        return bytes(chunk.subarray(0, rows * this.dimensions));
      });
      return [header, bytes(docs), bytes(scales), ...parts];
    }
    const codes = new Int16Array(docs.length * this.dimensions);
    docs.forEach((doc, n) => codes.set(this.codesOf(doc), n * this.dimensions));
    return [header, bytes(docs), bytes(scales), bytes(codes)];
  }

  /** The graph's version: what `viewSaved` is given to tell whether a saved file still holds the graph. */
  get graphVersion(): number {
    return this.graphEdits;
  }

  /**
   * Searches the graph where `save` wrote it (mapped, as after an open) instead of in memory,
   * when it has not changed since (`version`: graphVersion after that save). A graph built
   * in memory by a load holds its nodes in growing arenas (at 300k items several hundred MB
   * more than its file); the next change reads the file into memory again. Returns whether it
   * did.
   */
  viewSaved(graphPath: string, version: number): boolean {
    const size = this.ann.size();
    // an empty graph holds no memory worth a mapping
    if (this.viewed || version !== this.graphEdits || size === 0) return false;
    // on the same index: usearch frees the graph in memory before it maps the file (a new index
    // would leave the old one's memory to whenever its object is collected)
    try {
      this.ann.view(graphPath);
      if (this.ann.size() !== size) throw new Error('vector graph file does not hold the graph');
    } catch (err) {
      // the graph is gone from memory either way: built again from the codes, on the next search
      this.ann = newAnn(this.dimensions);
      this.pending = [...this.inGraph];
      this.inGraph = new DocSet();
      this.graphEdits++;
      throw err;
    }
    this.viewed = graphPath;
    return true;
  }

  /** Reads what `save` wrote (throws when it does not fit together). */
  load(graphPath: string, codesFile: Buffer): void {
    if (codesFile.length < 12 || codesFile.readUInt32LE(0) !== 1) throw new Error('not a vector file');
    if (codesFile.readUInt32LE(4) !== this.dimensions) throw new Error('vector file of other dimensions');
    const n = codesFile.readUInt32LE(8);
    if (codesFile.length !== 12 + n * 8 + n * this.dimensions * 2)
      throw new Error('vector file is truncated');
    const docs = new Uint32Array(copy(codesFile, 12, n * 4));
    const scales = new Float32Array(copy(codesFile, 12 + n * 4, n * 4));
    // the codes read in place when aligned (a file's own buffer is): no second copy of them all
    const at = 12 + n * 8;
    const codes =
      (codesFile.byteOffset + at) % 2 === 0
        ? new Int16Array(codesFile.buffer, codesFile.byteOffset + at, n * this.dimensions)
        : new Int16Array(copy(codesFile, at, n * this.dimensions * 2));
    // the graph viewed (memory-mapped): searched where it lies, read into memory only to change it
    const ann = newAnn(this.dimensions);
    ann.view(graphPath);
    if (ann.size() !== n) throw new Error('vector graph and codes disagree');
    this.ann = ann;
    this.viewed = graphPath;
    const max = docs.reduce((a, b) => Math.max(a, b), 0);
    const dims = this.dimensions;
    if (
      max + 1 === n &&
      this.scales.length === 0 &&
      codes.buffer === codesFile.buffer &&
      codesFile.byteLength === codesFile.buffer.byteLength
    ) {
      // documents 0…n−1 in order (a snapshot without gaps): the file's codes are the chunks, used
      // where they were read (no second copy of them all, no time copying); a chunk short of
      // CHUNK_DOCS (the last) is copied whole once a document is written into it
      this.chunks = [];
      for (let at = 0; at < n; at += CHUNK_DOCS)
        this.chunks.push(codes.subarray(at * dims, Math.min(n, at + CHUNK_DOCS) * dims));
      this.scales = scales;
      for (let doc = 0; doc < n; doc++) this.present.add(doc);
    } else {
      // sized once, to the documents there are (no room to grow until more come)
      if (max + 1 > this.scales.length) {
        const grown = new Float32Array(max + 1);
        grown.set(this.scales);
        this.scales = grown;
      }
      // copied a run of consecutive documents at a time (within a chunk); chunks a snapshot may
      // still be writing are copied first
      for (let i = 0; i < n;) {
        const doc = docs[i]!;
        const room = CHUNK_DOCS - (doc & CHUNK_MASK);
        let j = i + 1;
        while (j < n && j - i < room && docs[j] === docs[j - 1]! + 1) j++;
        this.scales.set(scales.subarray(i, j), doc);
        this.writableChunk(doc).set(codes.subarray(i * dims, j * dims), (doc & CHUNK_MASK) * dims);
        for (let k = i; k < j; k++) this.present.add(docs[k]!);
        i = j;
      }
    }
    this.inGraph = DocSet.of(docs);
    this.pending = [];
    this.count = n;
  }

  /** The graph, read into memory first when it is a view (a view cannot change). */
  private writable(): AnnIndex {
    if (this.viewed) {
      const ann = newAnn(this.dimensions);
      ann.load(this.viewed);
      this.ann = ann;
      this.viewed = undefined;
    }
    return this.ann;
  }

  /** A stored document's codes (a view). */
  private codesOf(doc: number): Int16Array {
    const base = (doc & CHUNK_MASK) * this.dimensions;
    return this.chunks[doc >> CHUNK_SHIFT]!.subarray(base, base + this.dimensions);
  }

  /**
   * The chunk `doc`'s codes are written into: made when missing, made whole when short (read
   * from a file), copied first when a snapshot may still be writing the document's codes.
   */
  private writableChunk(doc: number): Int16Array {
    const c = doc >> CHUNK_SHIFT;
    const chunk = this.chunks[c];
    const size = CHUNK_DOCS * this.dimensions;
    const covered = chunk && this.shared.get(chunk);
    if (chunk && chunk.length === size && !(covered && (doc & CHUNK_MASK) < covered)) return chunk;
    const own = new Int16Array(size);
    if (chunk) {
      own.set(chunk);
      this.shared.delete(chunk);
    }
    while (this.chunks.length < c) this.chunks.push(new Int16Array(size));
    this.chunks[c] = own;
    return own;
  }

  private encode(doc: number, v: Float32Array): void {
    if (doc >= this.scales.length) {
      const scales = new Float32Array(Math.max(doc + 1, Math.ceil(this.scales.length * 1.5), 1024));
      scales.set(this.scales);
      this.scales = scales;
    }
    const codes = this.writableChunk(doc);
    let max = 0;
    for (let i = 0; i < v.length; i++) max = Math.max(max, Math.abs(v[i]!));
    const scale = max === 0 ? 0 : max / 32767;
    const base = (doc & CHUNK_MASK) * this.dimensions;
    for (let i = 0; i < v.length; i++) codes[base + i] = scale === 0 ? 0 : Math.round(v[i]! / scale);
    this.scales[doc] = scale;
  }
}

function newAnn(dimensions: number): AnnIndex {
  return new Index({
    dimensions,
    metric: usearch.MetricKind.Cos,
    quantization: usearch.ScalarKind.I8,
    connectivity: CONNECTIVITY,
    expansion_add: EXPANSION_ADD,
    expansion_search: EXPANSION_SEARCH,
    multi: false,
  });
}

/**
 * A vector scaled so its largest entry is ±1: the graph stores 8 bits per entry over [-1, 1],
 * and unit vectors of 512 entries would use only a few of those levels. Cosine ignores scale.
 */
function fullRange(v: Float32Array): Float32Array {
  let max = 0;
  for (let i = 0; i < v.length; i++) max = Math.max(max, Math.abs(v[i]!));
  if (max === 0) return v;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! / max;
  return out;
}

/** The non-zero entries of a sparse query (the local model's), or undefined for a dense one. */
function sparseEntries(query: Float32Array): number[] | undefined {
  const nonzero: number[] = [];
  for (let i = 0; i < query.length; i++) if (query[i] !== 0) nonzero.push(i);
  return nonzero.length * 2 < query.length ? nonzero : undefined;
}

const bytes = (a: Uint32Array | Float32Array | Int16Array): Buffer =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength);

function copy(buf: Buffer, start: number, length: number): ArrayBuffer {
  const out = new ArrayBuffer(length);
  new Uint8Array(out).set(buf.subarray(start, start + length));
  return out;
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
