import { z } from 'zod';
import type { Fact } from '@askbus/understand';
import { nameKey } from '@askbus/understand';

/**
 * Every item's facts as columns, one per property path, kept as the items are indexed (no item
 * is looked at again to answer a constraint or an order):
 *
 * - the documents of each value (by nameKey), for value constraints;
 * - every number with its document (sorted on first use after a change), for ranges;
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

const FORMAT = 1;
const EMPTY: FactColumn = {
  values: new Map(),
  nums: new Float64Array(0),
  numDocs: new Uint32Array(0),
  first: new Float64Array(0),
  order: new Uint32Array(0),
};

class Builder {
  values = new Map<string, ValueDocs>();
  nums = new Float64Array(16);
  numDocs = new Uint32Array(16);
  count = 0;
  first = new Float64Array(0).fill(NaN);
  view: FactColumn | undefined;

  addNumber(doc: number, num: number): void {
    if (this.count === this.nums.length) {
      const size = Math.max(16, this.count * 2);
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
      const first = new Float64Array(Math.max(doc + 1, this.first.length * 2, 64)).fill(NaN);
      first.set(this.first);
      this.first = first;
    }
    if (Number.isNaN(this.first[doc]!)) this.first[doc] = num;
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
    const n = this.count;
    const perm = new Uint32Array(n);
    for (let i = 0; i < n; i++) perm[i] = i;
    const nums = this.nums;
    perm.sort((a, b) => nums[a]! - nums[b]! || a - b);
    const first = this.first;
    let withFirst = 0;
    for (let d = 0; d < first.length; d++) if (!Number.isNaN(first[d]!)) withFirst++;
    const order = new Uint32Array(withFirst);
    let at = 0;
    for (let d = 0; d < first.length; d++) if (!Number.isNaN(first[d]!)) order[at++] = d;
    order.sort((a, b) => first[a]! - first[b]! || a - b);
    this.view = {
      values: this.values,
      nums: Float64Array.from(perm, (i) => nums[i]!),
      numDocs: Uint32Array.from(perm, (i) => this.numDocs[i]!),
      first,
      order,
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

  /** The columns as bytes: `load` reads them back. */
  serialize(): Buffer {
    const paths: z.infer<typeof Header>['paths'] = [];
    const parts: Buffer[] = [];
    const typed = (x: Float64Array | Uint32Array): Buffer =>
      Buffer.from(x.buffer, x.byteOffset, x.byteLength);
    for (const [path, b] of this.builders) {
      const keys = [...b.values.keys()];
      const lists = keys.map((k) => docsOf(b.values.get(k)));
      const lengths = lists.map((l) => l.length);
      const docs = new Uint32Array(lengths.reduce((x, y) => x + y, 0));
      let at = 0;
      for (const l of lists) {
        docs.set(l, at);
        at += l.length;
      }
      const nums = b.nums.subarray(0, b.count);
      const numDocs = b.numDocs.subarray(0, b.count);
      paths.push({ path, keys, lengths, numbers: b.count, first: b.first.length });
      // the Float64 sections first: every section starts 8-aligned
      parts.push(typed(nums), typed(b.first), typed(numDocs), typed(docs));
      if ((numDocs.byteLength + docs.byteLength) % 8) parts.push(Buffer.alloc(4));
    }
    const header = Buffer.from(JSON.stringify({ format: FORMAT, paths }));
    const head = Buffer.alloc(8);
    head.writeUInt32LE(FORMAT, 0);
    head.writeUInt32LE(header.length, 4);
    return Buffer.concat([head, header, Buffer.alloc((8 - (header.length % 8)) % 8), ...parts]);
  }

  /** Reads what `serialize` wrote; throws on anything else. */
  static load(buf: Buffer): FactColumns {
    if (buf.length < 8 || buf.readUInt32LE(0) !== FORMAT) throw new Error('not fact columns');
    const headerLength = buf.readUInt32LE(4);
    const header = Header.parse(JSON.parse(buf.toString('utf8', 8, 8 + headerLength)));
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
      const total = p.lengths.reduce((x, y) => x + y, 0);
      if (p.keys.length !== p.lengths.length) throw new Error('fact columns are damaged');
      b.nums = take(p.numbers, 8, (d, o, n) => new Float64Array(d, o, n));
      b.first = take(p.first, 8, (d, o, n) => new Float64Array(d, o, n));
      b.numDocs = take(p.numbers, 4, (d, o, n) => new Uint32Array(d, o, n));
      b.count = p.numbers;
      const docs = take(total, 4, (d, o, n) => new Uint32Array(d, o, n));
      if ((p.numbers * 4 + total * 4) % 8) at += 4;
      let from = 0;
      p.keys.forEach((k, i) => {
        const n = p.lengths[i]!;
        b.values.set(k, n === 1 ? docs[from]! : docs.subarray(from, from + n));
        from += n;
      });
      out.builders.set(p.path, b);
    }
    if (at !== data.byteLength) throw new Error('fact columns are damaged');
    return out;
  }
}

const Header = z.object({
  format: z.literal(FORMAT),
  paths: z.array(
    z.object({
      path: z.string(),
      keys: z.array(z.string()),
      lengths: z.array(z.number().int().nonnegative()),
      numbers: z.number().int().nonnegative(),
      first: z.number().int().nonnegative(),
    }),
  ),
});
