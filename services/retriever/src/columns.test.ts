import { describe, expect, it } from 'vitest';
import type { Order, StoredItem, Target } from '@askbus/contracts';
import { DocSet } from '@askbus/search-core';
import { fitOfValue, type Fact } from '@askbus/understand';
import { docsOf, FactColumns, type FactColumn } from './columns';
import { ColumnSelection, sortTarget, type SelectionSource } from './index-store';
import { contenders, nthLargest } from './structured-search';
import { UrlOrder } from './url-order';
import { seededRandom } from './synthetic';

/**
 * The structured search's column paths: the best items by a number taken from a column's order
 * (or a derived quantity over columns) are the head of a full sort, ties included; the fits over
 * columns are satisfaction's; the pruned candidates are the only ones that can reach the top.
 */

/** `docs` documents, each with numbers at `a` and `b` (some missing, many tied), as a selection source. */
function source(docs: number, seed: number): { src: SelectionSource; a: number[]; b: number[] } {
  const rnd = seededRandom(seed);
  const draw = (): number => (rnd() < 0.15 ? NaN : Math.round(rnd() * 40) - 10);
  const a = Array.from({ length: docs }, draw);
  const b = Array.from({ length: docs }, draw);
  const column = (values: number[]): FactColumn => {
    const first = Float64Array.from(values);
    const withNumber = values.flatMap((v, doc) => (Number.isNaN(v) ? [] : [doc]));
    const order = Uint32Array.from(withNumber).sort((x, y) => first[x]! - first[y]! || x - y);
    return {
      values: new Map(),
      nums: Float64Array.from(order, (d) => first[d]!),
      numDocs: order,
      first,
      order,
    };
  };
  const columns = new Map([
    ['a', column(a)],
    ['b', column(b)],
  ]);
  const url = (doc: number): string => `https://x.example/${String(doc).padStart(5, '0')}`;
  const urls = Array.from({ length: docs }, (_, doc) => url(doc));
  const src: SelectionSource = {
    item: (doc) => ({ url: url(doc) }) as StoredItem,
    url,
    doc: (u) => Number(u.slice(-5)),
    column: (path) => columns.get(path)!,
    sorted: (target) => sortTarget(target, { column: (path) => columns.get(path)! }),
    byUrl: new UrlOrder(() => urls),
  };
  return { src, a, b };
}

/** The full sort: every selected document with the number, best first (ties by document), then the head with its ties. */
function fullSortHead(keys: Array<[number, number]>, n: number): Array<[number, number]> {
  const sorted = [...keys].sort((x, y) => y[1] - x[1] || x[0] - y[0]);
  if (sorted.length <= n) return sorted;
  const floor = sorted[n - 1]![1];
  return sorted.filter(([, k]) => k >= floor);
}

const byDoc = (x: [number, number], y: [number, number]): number => x[0] - y[0];

describe('ColumnSelection.best', () => {
  const { src, a, b } = source(3_000, 7);
  const rnd = seededRandom(11);
  const selected = DocSet.of(a.flatMap((_, doc) => (rnd() < 0.6 ? [doc] : [])));
  const selection = new ColumnSelection(src, selected);
  const targets: Array<{ target: Target; value: (doc: number) => number | undefined }> = [
    { target: { path: 'a' }, value: (d) => (Number.isNaN(a[d]!) ? undefined : a[d]) },
    {
      target: { derived: { op: 'difference', a: 'a', b: 'b', label: 'a − b' } },
      value: (d) => (Number.isNaN(a[d]!) || Number.isNaN(b[d]!) ? undefined : a[d]! - b[d]!),
    },
    {
      target: { derived: { op: 'ratio', a: 'a', b: 'b', label: 'a / b' } },
      value: (d) => (Number.isNaN(a[d]!) || Number.isNaN(b[d]!) || b[d] === 0 ? undefined : a[d]! / b[d]!),
    },
  ];

  for (const { target, value } of targets)
    for (const direction of ['desc', 'asc'] as const)
      for (const n of [1, 10, 50, 5_000])
        it(`equals a full sort: ${JSON.stringify(target)} ${direction}, top ${n}`, () => {
          const keys: Array<[number, number]> = [];
          for (const doc of selected) {
            const v = value(doc);
            if (v !== undefined) keys.push([doc, direction === 'desc' ? v : -v]);
          }
          const expected = fullSortHead(keys, n);
          const got = selection
            .best(target, direction, n)
            .map((x): [number, number] => [src.doc(x.url)!, x.sortKey]);
          expect(got.sort(byDoc)).toEqual(expected.sort(byDoc));
          if (n < keys.length) expect(got.length).toBeGreaterThanOrEqual(n);
        });

  it('counts and lists exactly the selected items', () => {
    expect(selection.count).toBe([...selected].length);
    expect(selection.fits([]).urls.map((u) => src.doc(u))).toEqual([...selected]);
    const out = [...Array(3_000).keys()].find((d) => !selected.has(d))!;
    expect(selection.get(src.url(out))).toBeUndefined();
    expect(selection.get(src.url(selected.toArray()[0]!))).toBeDefined();
  });

  it("fits to the orders are satisfaction's (mean of each order's fit, 0 without the number)", () => {
    const orders: Order[] = [
      {
        target: { path: 'a' },
        direction: 'desc',
        strength: 'prefer',
        phrase: 'high a',
        text: 'high a',
        quantiles: [-10, -5, 0, 3, 6, 9, 12, 15, 20, 25, 30],
      },
      {
        target: { derived: { op: 'difference', a: 'a', b: 'b', label: 'a − b' } },
        direction: 'asc',
        strength: 'prefer',
        phrase: 'low a − b',
        text: 'low a − b',
      },
    ];
    const { urls, fits } = selection.fits(orders);
    urls.forEach((url, i) => {
      const doc = src.doc(url)!;
      const va = targets[0]!.value(doc);
      const vd = targets[1]!.value(doc);
      const expected =
        ((va === undefined ? 0 : fitOfValue(orders[0]!, va)) +
          (vd === undefined ? 0 : fitOfValue(orders[1]!, vd))) /
        2;
      expect(fits[i]).toBeCloseTo(expected, 12);
    });
  });
});

describe('ColumnSelection.bestFits', () => {
  const { src, a } = source(3_000, 9);
  const rnd = seededRandom(13);
  const selected = DocSet.of(a.flatMap((_, doc) => (rnd() < 0.7 ? [doc] : [])));
  const selection = new ColumnSelection(src, selected);
  const order = (target: Target, direction: 'asc' | 'desc', quantiles?: number[]): Order => ({
    target,
    direction,
    strength: 'prefer',
    phrase: 'p',
    text: 'p',
    ...(quantiles ? { quantiles } : {}),
  });
  const difference: Target = { derived: { op: 'difference', a: 'a', b: 'b', label: 'a − b' } };
  const cases: Order[] = [
    order({ path: 'a' }, 'desc', [-10, -5, 0, 3, 6, 9, 12, 15, 20, 25, 30]),
    order({ path: 'a' }, 'asc', [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
    order(difference, 'asc', [-20, -10, -5, -2, 0, 2, 5, 8, 12, 20, 40]),
    order(difference, 'desc'),
  ];
  for (const o of cases)
    for (const n of [1, 20, 200])
      it(`keeps what the fits of every item keep: ${JSON.stringify(o.target)} ${o.direction}, ${n}`, () => {
        const all = selection.fits([o]);
        const skip = new Set(all.urls.filter(() => rnd() < 0.05));
        const head = selection.bestFits(o, n, skip);
        expect(head).toBeDefined();
        // the head: every item of a fit at least the n-th best of the others, and only those
        const others = all.urls.map((u, i) => ({ u, fit: all.fits[i]! })).filter((x) => !skip.has(x.u));
        const floor = others.map((x) => x.fit).sort((x, y) => y - x)[n - 1]!;
        expect(new Set(head!.urls)).toEqual(new Set(others.filter((x) => x.fit >= floor).map((x) => x.u)));
        head!.urls.forEach((u, i) => expect(head!.fits[i]).toBe(all.fits[all.urls.indexOf(u)]));
        expect(selection.has(head!.urls[0]!)).toBe(true);
      });
  it('leaves it to the fits of every item when the n-th best fit is 0 (items without the number tie)', () => {
    expect(selection.bestFits(order({ path: 'a' }, 'desc', [100, 101]), 5, new Set())).toBeUndefined();
  });
});

describe('contenders', () => {
  it('keeps the ranked and named items and the best others by fit, then URL', () => {
    const rnd = seededRandom(3);
    const urls = Array.from({ length: 500 }, (_, i) => `u${String(i).padStart(3, '0')}`);
    const fits = Float64Array.from(urls, () => Math.round(rnd() * 10) / 10);
    const ranked = new Set(urls.filter(() => rnd() < 0.1));
    const named = new Set([urls[17]!]);
    const kept = contenders(urls, fits, ranked, named, 20).map((i) => urls[i]!);
    for (const u of ranked) expect(kept).toContain(u);
    expect(kept).toContain(urls[17]);
    const others = urls
      .map((u, i) => ({ u, fit: fits[i]! }))
      .filter((x) => !ranked.has(x.u) && !named.has(x.u))
      .sort((x, y) => y.fit - x.fit || (x.u < y.u ? -1 : 1))
      .slice(0, 20)
      .map((x) => x.u);
    expect(kept.filter((u) => !ranked.has(u) && !named.has(u)).sort()).toEqual(others.sort());
  });
});

const fact = (path: string, f: Partial<Fact>): Fact => ({
  path,
  label: path,
  context: '',
  kind: 'number',
  ...f,
});

describe('FactColumns', () => {
  it('reads back what it wrote: the same columns, and keeps growing after', () => {
    const rnd = seededRandom(5);
    const cols = new FactColumns();
    for (let doc = 0; doc < 2_000; doc++) {
      const facts = new Map<string, Fact[]>();
      if (rnd() < 0.8)
        facts.set('n', [fact('n', { num: Math.round(rnd() * 100) }), fact('n', { num: rnd() })]);
      if (rnd() < 0.5)
        facts.set('s', [fact('s', { kind: 'string', str: ['Red', 'Green', 'Dark Blue'][doc % 3]! })]);
      if (rnd() < 0.3) facts.set('odd', [fact('odd', { num: -doc, str: `x${doc % 7}` })]);
      cols.add(doc, facts);
    }
    const loaded = FactColumns.load(cols.serialize());
    expect(loaded.paths.sort()).toEqual(cols.paths.sort());
    for (const path of cols.paths) {
      const a = cols.column(path);
      const b = loaded.column(path);
      expect([...b.nums]).toEqual([...a.nums]);
      expect([...b.numDocs]).toEqual([...a.numDocs]);
      expect([...b.order]).toEqual([...a.order]);
      // the same first numbers, written without the room after the last document that has one
      const lastWithFirst = a.first.findLastIndex((x) => !Number.isNaN(x));
      expect([...b.first]).toEqual([...a.first.subarray(0, lastWithFirst + 1)]);
      expect([...b.values].map(([k, d]) => [k, [...docsOf(d)]])).toEqual(
        [...a.values].map(([k, d]) => [k, [...docsOf(d)]]),
      );
    }
    loaded.add(2_000, new Map([['n', [fact('n', { num: 1e9 })]]]));
    const n = loaded.column('n');
    expect(n.order[n.order.length - 1]).toBe(2_000);
    expect(n.nums[n.nums.length - 1]).toBe(1e9);
    // a number below all the saved ones sorts first once the column changes
    loaded.add(2_001, new Map([['n', [fact('n', { num: -5 })]]]));
    expect(loaded.column('n').order[0]).toBe(2_001);
    expect(loaded.column('n').nums[0]).toBe(-5);
    expect(() => FactColumns.load(Buffer.from('broken'))).toThrow();
  });

  it('keeps one copy of a viewed column: the view is its numbers, and numbers added after leave that view as it was', () => {
    const cols = new FactColumns();
    const num = (x: number) => new Map([['n', [fact('n', { num: x })]]]);
    [5, 1, 5, 3].forEach((x, doc) => cols.add(doc, num(x)));
    const before = cols.column('n');
    const builder = (cols as unknown as { builders: Map<string, { nums: Float64Array }> }).builders.get('n')!;
    expect(builder.nums).toBe(before.nums);
    expect([...before.nums]).toEqual([1, 3, 5, 5]);
    expect([...before.numDocs]).toEqual([1, 3, 0, 2]);
    [5, 0, 3].forEach((x, i) => cols.add(4 + i, num(x)));
    expect([...before.nums]).toEqual([1, 3, 5, 5]);
    expect([...before.numDocs]).toEqual([1, 3, 0, 2]);
    const after = cols.column('n');
    // ties in the order their numbers came
    expect([...after.nums]).toEqual([0, 1, 3, 3, 5, 5, 5]);
    expect([...after.numDocs]).toEqual([5, 1, 3, 6, 0, 2, 4]);
  });

  it('writes its parts apart from the live columns: a change after serializeParts leaves them as they were', () => {
    const cols = new FactColumns();
    const num = (x: number) => new Map([['n', [fact('n', { num: x })]]]);
    cols.add(0, num(3));
    cols.add(9, num(1));
    const parts = cols.serializeParts();
    const saved = Buffer.concat(parts);
    // a document under the last one that has a number: its first number is written in place
    cols.add(4, num(2));
    cols.add(10, num(-1));
    expect(Buffer.concat(parts).equals(saved)).toBe(true);
    expect([...FactColumns.load(saved).column('n').order]).toEqual([9, 0]);
    expect([...FactColumns.load(cols.serialize()).column('n').order]).toEqual([10, 9, 4, 0]);
  });

  it("opens sorted: a column read back is the file's arrays as written, not sorted again", () => {
    const cols = new FactColumns();
    for (let doc = 0; doc < 50; doc++) cols.add(doc, new Map([['n', [fact('n', { num: (doc * 37) % 11 })]]]));
    const loaded = FactColumns.load(cols.serialize());
    const col = loaded.column('n');
    // one buffer: the aligned copy of the file that load views (a sort would have made new arrays)
    expect(col.nums.buffer).toBe(col.order.buffer);
    expect(col.numDocs.buffer).toBe(col.first.buffer);
    expect(col.nums.buffer).toBe(col.first.buffer);
    expect([...col.order]).toEqual([...cols.column('n').order]);
  });

  it('refuses a file whose header lists do not fit together, saying what is wrong', () => {
    const cols = new FactColumns();
    cols.add(0, new Map([['s', [fact('s', { kind: 'string', str: 'Red' })]]]));
    const bytes = cols.serialize();
    const headerLength = bytes.readUInt32LE(4);
    const header = JSON.parse(bytes.toString('utf8', 8, 8 + headerLength));
    const rewrite = (h: unknown): Buffer => {
      // the same length of header (padded with spaces), so the sections stay where they are
      const text = JSON.stringify(h).padEnd(headerLength, ' ');
      expect(Buffer.byteLength(text)).toBe(headerLength);
      const out = Buffer.from(bytes);
      out.write(text, 8, 'utf8');
      return out;
    };
    const path = header.paths[0];
    expect(() => FactColumns.load(rewrite({ ...header, paths: [{ ...path, lengths: [] }] }))).toThrow(
      /fact columns are damaged: s has 1 values, 0 counts/,
    );
    expect(() => FactColumns.load(rewrite({ ...header, paths: [{ ...path, lengths: [0] }] }))).toThrow(
      /a count of s is not a positive integer/,
    );
    expect(() => FactColumns.load(rewrite({ ...header, paths: [{ ...path, keys: [7] }] }))).toThrow(
      /a key of s is not text/,
    );
  });
});

describe('nthLargest', () => {
  it('is what a full sort has n from the end, ties and NaN included, over all or some indices', () => {
    const rnd = seededRandom(11);
    for (const len of [1, 7, 100, 2_000]) {
      const values = Float64Array.from({ length: len }, () => (rnd() < 0.05 ? NaN : Math.round(rnd() * 50)));
      const at = Uint32Array.from({ length: Math.floor(len / 2) }, () => Math.floor(rnd() * len));
      for (const n of [1, 3, 50, len]) {
        const sorted = (xs: number[]): number[] =>
          xs.map((x) => (Number.isNaN(x) ? -Infinity : x)).sort((a, b) => a - b);
        const all = sorted([...values]);
        expect(nthLargest(values, n)).toBe(n <= len ? all[len - n] : NaN);
        const some = sorted([...at].map((i) => values[i]!));
        expect(nthLargest(values, n, at)).toBe(n <= some.length ? some[some.length - n] : NaN);
      }
    }
    expect(nthLargest([1, 2], 0)).toBeNaN();
  });
});
