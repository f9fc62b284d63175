import { z } from 'zod';
import type { Fact } from '@askbus/understand';
import { nameKey } from '@askbus/understand';
import { sortByKeys } from '@askbus/search-core';

/**
 * Every item's facts as columns, one per property path, kept as the items are indexed (no item
 * is looked at again to answer a constraint or an order):
 *
 * - the documents of each value (by nameKey), for value constraints;
 * - every number with its document (sorted on first use after a change, and when saved), for ranges;
 * - each document's first number (what orders and derived quantities use, as targetValue does)
 *   and the documents sorted by it, for superlatives.
 *
 * Append-only: a replaced or deleted item's document stays in the columns; every query
 * intersects with the live documents. `serialize`/`load` write and read them as bytes, so
 * reopening an index does not analyse its items again.
 */

/** One property's values and numbers, for structured searches. */
export interface FactColumn {
  /**
   * Documents by value key (nameKey): one document as its number (most values of a name-like
   * property: 290k of them at 300k items, where a view each cost ~100 bytes), else arrays or
   * views into the file a column was read from. `docsOf` reads either.
   */
  values: Map<string, ValueDocs>;
  /** Every number of the property, ascending, and its document. */
  nums: Float64Array;
  numDocs: Uint32Array;
  /** Each document's first number (what orders and derived quantities use); NaN when it has none. */
  first: Float64Array;
  /** The documents that have a first number, by it ascending (ties: lower document first). */
  order: Uint32Array;
}

/** The documents of one value: a single document's number, or a list. */
export type ValueDocs = number | number[] | Uint32Array;

/** The documents of one value as a list. */
export function docsOf(v: ValueDocs | undefined): ArrayLike<number> & Iterable<number> {
  return v === undefined ? [] : typeof v === 'number' ? [v] : v;
}

/** 2: each column saved sorted, with its order by first number. */
const FORMAT = 2;
const EMPTY: FactColumn = {
  values: new Map(),
  nums: new Float64Array(0),
  numDocs: new Uint32Array(0),
  first: new Float64Array(0),
  order: new Uint32Array(0),
};

class Builder {
  private valueMap: Map<string, ValueDocs> | undefined = new Map();
  /** The values as read from a file (keys, each one's count, their documents): made a map on first use. */
  private saved: { keys: string[]; lengths: number[]; docs: Uint32Array } | undefined;
  nums = new Float64Array(16);
  numDocs = new Uint32Array(16);
  count = 0;
  first = new Float64Array(0).fill(NaN);
  /** Entries of `first` a save was handed as they lie (serializeParts): copied before one of them is written. */
  firstShared = 0;
  view: FactColumn | undefined;

  /** Documents by value key: read from the file's lists when first asked for (most columns never are). */
  get values(): Map<string, ValueDocs> {
    if (this.valueMap) return this.valueMap;
    const { keys, lengths, docs } = this.saved!;
    const map = new Map<string, ValueDocs>();
    let from = 0;
    for (let i = 0; i < keys.length; i++) {
      const n = lengths[i]!;
      map.set(keys[i]!, n === 1 ? docs[from]! : docs.subarray(from, from + n));
      from += n;
    }
    this.saved = undefined;
    return (this.valueMap = map);
  }

  /** Values as `serialize` wrote them, not yet a map. */
  restoreValues(keys: string[], lengths: number[], docs: Uint32Array): void {
    this.valueMap = undefined;
    this.saved = { keys, lengths, docs };
  }

  /**
   * The column as `serialize` wrote it (numbers ascending with their documents, and the order by
   * first number): no sort until the column changes.
   */
  restoreView(order: Uint32Array): void {
    const values = (): Map<string, ValueDocs> => this.values;
    this.view = {
      get values() {
        return values();
      },
      nums: this.nums,
      numDocs: this.numDocs,
      first: this.first,
      order,
    };
  }

  /** The saved lists as they are, or the map's: keys, counts, documents. */
  valueLists(): { keys: string[]; lengths: number[]; docs: Uint32Array } {
    if (this.saved) return this.saved;
    const keys = [...this.values.keys()];
    const lists = keys.map((k) => docsOf(this.values.get(k)));
    const lengths = lists.map((l) => l.length);
    const docs = new Uint32Array(lengths.reduce((x, y) => x + y, 0));
    let at = 0;
    for (const l of lists) {
      docs.set(l, at);
      at += l.length;
    }
    return { keys, lengths, docs };
  }

  /** Each document's first number up to the last document that has one (no room left to grow). */
  firstTrimmed(): Float64Array {
    let n = this.first.length;
    while (n > 0 && Number.isNaN(this.first[n - 1]!)) n--;
    return this.first.subarray(0, n);
  }

  addNumber(doc: number, num: number): void {
    if (this.count === this.nums.length) {
      // by half (not double), as the postings: less room left unused at the end of a load
      const size = Math.max(16, Math.ceil(this.count * 1.5));
      const nums = new Float64Array(size);
      nums.set(this.nums);
      this.nums = nums;
      const docs = new Uint32Array(size);
      docs.set(this.numDocs);
      this.numDocs = docs;
    }
    this.nums[this.count] = num;
    this.numDocs[this.count++] = doc;
    if (doc >= this.first.length) {
      const first = new Float64Array(Math.max(doc + 1, Math.ceil(this.first.length * 1.5), 64)).fill(NaN);
      first.set(this.first);
      this.first = first;
      this.firstShared = 0;
    }
    if (!Number.isNaN(this.first[doc]!)) return;
    if (doc < this.firstShared) {
      this.first = this.first.slice();
      this.firstShared = 0;
    }
    this.first[doc] = num;
  }

  addValue(doc: number, key: string): void {
    const list = this.values.get(key);
    if (list === undefined) this.values.set(key, doc);
    else if (typeof list === 'number') {
      if (list !== doc) this.values.set(key, [list, doc]);
    } else if (list[list.length - 1] !== doc) {
      // a list read from a file is a view: copied out when it first grows
      if (list instanceof Uint32Array) this.values.set(key, [...list, doc]);
      else list.push(doc);
    }
  }

  column(): FactColumn {
    if (this.view) return this.view;
    const values = (): Map<string, ValueDocs> => this.values;
    const n = this.count;
    const ascending = new Uint32Array(n);
    for (let i = 0; i < n; i++) ascending[i] = i;
    const nums = this.nums;
    const perm = sortByKeys(ascending, nums);
    const first = this.first;
    let withFirst = 0;
    for (let d = 0; d < first.length; d++) if (!Number.isNaN(first[d]!)) withFirst++;
    const order = new Uint32Array(withFirst);
    let at = 0;
    for (let d = 0; d < first.length; d++) if (!Number.isNaN(first[d]!)) order[at++] = d;
    const sortedNums = Float64Array.from(perm, (i) => nums[i]!);
    const sortedDocs = Uint32Array.from(perm, (i) => this.numDocs[i]!);
    // the sorted numbers are the builder's own from now on (the same pairs; the sort is stable,
    // so ties keep the order they came in) and its arrays grown with room are let go: no second
    // copy of every number while the column is viewed. They are full, so the next number added
    // grows a copy: the view's arrays are never written.
    this.nums = sortedNums;
    this.numDocs = sortedDocs;
    this.view = {
      // read when a value constraint asks (a name column's map of 300k values is seldom wanted)
      get values() {
        return values();
      },
      nums: sortedNums,
      numDocs: sortedDocs,
      first,
      order: sortByKeys(order, first),
    };
    return this.view;
  }
}

export class FactColumns {
  private readonly builders = new Map<string, Builder>();

  /** Adds a document's facts (by path; text facts already left out). */
  add(doc: number, facts: ReadonlyMap<string, readonly Fact[]>): void {
    for (const [path, list] of facts) {
      let b = this.builders.get(path);
      if (!b) this.builders.set(path, (b = new Builder()));
      b.view = undefined;
      for (const f of list) {
        if (f.str !== undefined) b.addValue(doc, nameKey(f.str));
        if (f.num !== undefined) b.addNumber(doc, f.num);
      }
    }
  }

  /** A property's column (empty when no item has it). */
  column(path: string): FactColumn {
    return this.builders.get(path)?.column() ?? EMPTY;
  }

  get paths(): string[] {
    return [...this.builders.keys()];
  }

  /**
   * The columns as bytes: `load` reads them back. Each column is written sorted (its numbers
   * ascending, its documents by first number), so an index opened again answers ranges and
   * superlatives without sorting first.
   */
  serialize(): Buffer {
    return Buffer.concat(this.serializeParts());
  }

  /**
   * `serialize`'s bytes in parts, not joined (at 300k items a joined copy added 150 MB to a
   * save). The columns may change while the parts are written: the sorted numbers, their
   * documents and order are made anew when a column changes (never changed in place), so they
   * are written as they lie; so are the documents' first numbers, which are copied before one of
   * them is written (copy on write: a load only adds documents past them, so none is copied then).
   */
  serializeParts(): Buffer[] {
    const paths: z.infer<typeof Header>['paths'] = [];
    const parts: Buffer[] = [];
    const typed = (x: Float64Array | Uint32Array): Buffer =>
      Buffer.from(x.buffer, x.byteOffset, x.byteLength);
    for (const [path, b] of this.builders) {
      const { keys, lengths, docs } = b.valueLists();
      const { nums, numDocs, order } = b.column();
      // not the room grown for more documents, nor the documents after the last with a number
      const first = b.firstTrimmed();
      b.firstShared = Math.max(b.firstShared, first.length);
      paths.push({ path, keys, lengths, numbers: b.count, first: first.length, ordered: order.length });
      // the Float64 sections first: every section starts 8-aligned
      parts.push(typed(nums), typed(first), typed(numDocs), typed(order), typed(docs));
      if ((numDocs.byteLength + order.byteLength + docs.byteLength) % 8) parts.push(Buffer.alloc(4));
    }
    const header = Buffer.from(JSON.stringify({ format: FORMAT, paths }));
    const head = Buffer.alloc(8);
    head.writeUInt32LE(FORMAT, 0);
    head.writeUInt32LE(header.length, 4);
    return [head, header, Buffer.alloc((8 - (header.length % 8)) % 8), ...parts];
  }

  /** Reads what `serialize` wrote; throws on anything else. */
  static load(buf: Buffer): FactColumns {
    if (buf.length < 8 || buf.readUInt32LE(0) !== FORMAT) throw new Error('not fact columns');
    const headerLength = buf.readUInt32LE(4);
    const header = checkedHeader(JSON.parse(buf.toString('utf8', 8, 8 + headerLength)));
    let at = 8 + headerLength + ((8 - (headerLength % 8)) % 8);
    // one aligned copy of the sections, viewed by typed arrays
    const data = new ArrayBuffer(buf.length - at);
    new Uint8Array(data).set(buf.subarray(at));
    at = 0;
    const take = <T>(n: number, bytes: number, make: (b: ArrayBuffer, o: number, n: number) => T): T => {
      if (at + n * bytes > data.byteLength) throw new Error('fact columns are truncated');
      const out = make(data, at, n);
      at += n * bytes;
      return out;
    };
    const out = new FactColumns();
    for (const p of header.paths) {
      const b = new Builder();
      let total = 0;
      for (const n of p.lengths) total += n;
      b.nums = take(p.numbers, 8, (d, o, n) => new Float64Array(d, o, n));
      b.first = take(p.first, 8, (d, o, n) => new Float64Array(d, o, n));
      b.numDocs = take(p.numbers, 4, (d, o, n) => new Uint32Array(d, o, n));
      b.count = p.numbers;
      const order = take(p.ordered, 4, (d, o, n) => new Uint32Array(d, o, n));
      const docs = take(total, 4, (d, o, n) => new Uint32Array(d, o, n));
      if ((p.numbers * 4 + p.ordered * 4 + total * 4) % 8) at += 4;
      b.restoreValues(p.keys, p.lengths, docs);
      b.restoreView(order);
      out.builders.set(p.path, b);
    }
    if (at !== data.byteLength) throw new Error('fact columns are damaged');
    return out;
  }
}

/** The header's small part checked by its schema; the lists of keys and counts (one per value) by loops. */
const Header = z.object({
  format: z.literal(FORMAT),
  paths: z.array(
    z.object({
      path: z.string(),
      keys: z.custom<string[]>((v) => Array.isArray(v), 'keys must be a list'),
      lengths: z.custom<number[]>((v) => Array.isArray(v), 'lengths must be a list'),
      numbers: z.number().int().nonnegative(),
      first: z.number().int().nonnegative(),
      ordered: z.number().int().nonnegative(),
    }),
  ),
});

function checkedHeader(json: unknown): z.infer<typeof Header> {
  const header = Header.parse(json);
  for (const p of header.paths) {
    if (p.keys.length !== p.lengths.length)
      throw new Error(
        `fact columns are damaged: ${p.path} has ${p.keys.length} values, ${p.lengths.length} counts`,
      );
    for (const k of p.keys)
      if (typeof k !== 'string') throw new Error(`fact columns are damaged: a key of ${p.path} is not text`);
    for (const n of p.lengths)
      if (!Number.isInteger(n) || n < 1)
        throw new Error(`fact columns are damaged: a count of ${p.path} is not a positive integer`);
  }
  return header;
}
