import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { DocSet } from '@askbus/search-core';
import { VectorIndex } from './vectors';

/** Deterministic unit vectors: sparse sums of hashed entries, as the local model makes them. */
function vectors(n: number, dims: number): Float32Array[] {
  let seed = 42;
  const next = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  return Array.from({ length: n }, () => {
    const v = new Float32Array(dims);
    for (let i = 0; i < 40; i++) v[Math.floor(next() * dims)]! += next() < 0.5 ? -1 : 1;
    const norm = Math.hypot(...v) || 1;
    return v.map((x) => x / norm);
  });
}

describe('VectorIndex', () => {
  const dims = 64;
  const all = vectors(3_000, dims);

  it('finds nearly what an exact scan finds, with or without a filter', () => {
    const index = new VectorIndex(dims);
    index.setMany(
      all.map((_, i) => i),
      all,
    );
    expect(index.size).toBe(3_000);
    let found = 0;
    let self = 0;
    for (let q = 0; q < 20; q++) {
      const exact = new Set(index.exactSearch(all[q]!, 20).map((h) => h.doc));
      const graph = index.search(all[q]!, 20, undefined, 0, true);
      if (graph[0]?.doc === q) self++;
      found += graph.filter((h) => exact.has(h.doc)).length;
    }
    // approximate: (nearly) always itself first, (nearly) all of the exact neighbours
    expect(self).toBeGreaterThanOrEqual(19);
    expect(found / 400).toBeGreaterThan(0.9);
    const evens = DocSet.of(all.map((_, i) => i).filter((i) => i % 2 === 0));
    const hits = index.search(all[1]!, 10, evens, 0, true);
    expect(hits).toHaveLength(10);
    expect(hits.every((h) => h.doc % 2 === 0)).toBe(true);
    // a small filter is scanned exactly
    expect(index.search(all[7]!, 3, DocSet.of([7, 8, 9]))[0]!.doc).toBe(7);
  });

  it('does not scan everything when few vectors are close enough (minScore), only when the filter left too few', () => {
    const index = new VectorIndex(dims);
    index.setMany(
      all.map((_, i) => i),
      all,
    );
    const scan = vi.spyOn(index, 'exactSearch');
    const close = index.search(all[0]!, 50, undefined, 0.6, true);
    expect(close.length).toBeLessThan(50);
    expect(close[0]!.doc).toBe(0);
    expect(scan).not.toHaveBeenCalled();
  });

  it('scans exactly: the best k of the filter by cosine, best first, none under minScore', () => {
    const index = new VectorIndex(dims);
    index.setMany(
      all.map((_, i) => i),
      all,
    );
    const odds = DocSet.of(all.map((_, i) => i).filter((i) => i % 2 === 1));
    for (const q of [1, 2, 3]) {
      const cos = (i: number): number => all[i]!.reduce((s, x, j) => s + x * all[q]![j]!, 0);
      const expected = [...odds]
        .map((i) => ({ i, c: cos(i) }))
        .filter((x) => x.c >= 0.1)
        .sort((a, b) => b.c - a.c)
        .slice(0, 15);
      const got = index.exactSearch(all[q]!, 15, odds, 0.1);
      expect(got.map((h) => h.score)).toEqual([...got.map((h) => h.score)].sort((a, b) => b - a));
      got.forEach((h, n) => expect(h.score).toBeCloseTo(expected[n]!.c, 3));
      expect(got.every((h) => h.doc % 2 === 1 && h.score >= 0.1)).toBe(true);
    }
    expect(index.exactSearch(all[0]!, 0)).toEqual([]);
  });

  it('replaces and deletes, and reads back what it saved', () => {
    const dir = mkdtempSync(join(tmpdir(), 'askbus-vectors-'));
    try {
      const index = new VectorIndex(dims);
      index.setMany([0, 1, 2], all.slice(0, 3));
      index.set(1, all[10]!);
      index.delete(2);
      expect(index.size).toBe(2);
      expect(index.search(all[10]!, 1, undefined, 0, true)[0]!.doc).toBe(1);
      expect(index.search(all[2]!, 5, undefined, 0, true).map((h) => h.doc)).not.toContain(2);
      const codes = Buffer.concat(index.save(join(dir, 'g.usearch')));
      const again = new VectorIndex(dims);
      again.load(join(dir, 'g.usearch'), codes);
      expect(again.size).toBe(2);
      expect(again.search(all[10]!, 2, undefined, 0, true)).toEqual(
        index.search(all[10]!, 2, undefined, 0, true),
      );
      expect(() => new VectorIndex(dims + 1).load(join(dir, 'g.usearch'), codes)).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('searches the graph where it saved it while unchanged since (viewSaved), reads it back to change it, and builds it again from the codes when the file is bad', () => {
    const dir = mkdtempSync(join(tmpdir(), 'askbus-vectors-'));
    try {
      const graph = join(dir, 'g.usearch');
      const index = new VectorIndex(dims);
      index.setMany(
        all.slice(0, 2_000).map((_, i) => i),
        all.slice(0, 2_000),
      );
      index.save(graph);
      const saved = index.graphVersion;
      const before = index.search(all[5]!, 10, undefined, 0, true);
      // changed since its save: the file no longer holds the graph
      index.set(2_000, all[2_000]!);
      index.search(all[5]!, 1, undefined, 0, true);
      expect(index.viewSaved(graph, saved)).toBe(false);
      expect(index.search(all[2_000]!, 1, undefined, 0, true)[0]!.doc).toBe(2_000);
      index.save(graph);
      const after = index.search(all[5]!, 10, undefined, 0, true);
      expect(index.viewSaved(graph, index.graphVersion)).toBe(true);
      expect(index.viewSaved(graph, index.graphVersion)).toBe(false); // viewed already
      expect(index.search(all[5]!, 10, undefined, 0, true)).toEqual(after);
      expect(after.slice(0, 5)).toEqual(before.slice(0, 5));
      // a change reads the file back into memory first
      index.set(2_001, all[2_001]!);
      index.delete(3);
      const changed = index.search(all[2_001]!, 3, undefined, 0, true);
      expect(changed[0]!.doc).toBe(2_001);
      expect(index.search(all[3]!, 20, undefined, 0, true).map((h) => h.doc)).not.toContain(3);
      // a file that does not hold the graph: an error, and the graph built again from the codes
      index.save(graph);
      writeFileSync(graph, Buffer.alloc(64));
      expect(() => index.viewSaved(graph, index.graphVersion)).toThrow();
      expect(index.search(all[2_001]!, 3, undefined, 0, true)).toEqual(changed);
      expect(index.size).toBe(2_001);
      // viewed, the graph is the file's, not the memory's: gone with the file
      index.save(graph);
      expect(index.viewSaved(graph, index.graphVersion)).toBe(true);
      rmSync(graph);
      index.set(2_002, all[2_002]!);
      expect(() => index.search(all[2_002]!, 1, undefined, 0, true)).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('saves documents 0…n−1 without copying their codes, and a document set again after copies them first (the saved bytes stay as saved)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'askbus-vectors-'));
    try {
      const index = new VectorIndex(dims);
      index.setMany([0, 1, 2, 3], all.slice(0, 4));
      const parts = index.save(join(dir, 'g.usearch'));
      const saved = Buffer.concat(parts);
      // the codes parts are the live codes' memory (no 300 MB copy at 300k items)
      expect(parts.slice(3).reduce((n, p) => n + p.byteLength, 0)).toBe(4 * dims * 2);
      index.set(5, all[5]!); // past the saved documents: written in place (room permitting)
      index.set(1, all[20]!); // a saved document set again: copied first
      index.delete(2);
      expect(Buffer.concat(parts).equals(saved)).toBe(true);
      const again = new VectorIndex(dims);
      again.load(join(dir, 'g.usearch'), saved);
      expect(again.exactSearch(all[1]!, 1)[0]!.doc).toBe(1);
      expect(again.size).toBe(4);
      // and the live index has the new vector
      expect(index.exactSearch(all[20]!, 1)[0]!.doc).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads codes back from a file as they lie (documents 0…n−1) or copied (gaps), and grows after', () => {
    const dir = mkdtempSync(join(tmpdir(), 'askbus-vectors-'));
    try {
      for (const gap of [false, true]) {
        const index = new VectorIndex(dims);
        index.setMany(
          all.slice(0, 500).map((_, i) => i),
          all.slice(0, 500),
        );
        if (gap) index.delete(250);
        writeFileSync(join(dir, 'codes.bin'), Buffer.concat(index.save(join(dir, 'g.usearch'))));
        const again = new VectorIndex(dims);
        again.load(join(dir, 'g.usearch'), readFileSync(join(dir, 'codes.bin')));
        expect(again.size).toBe(gap ? 499 : 500);
        for (const q of [0, 3, 250, 499])
          expect(again.exactSearch(all[q]!, 10)).toEqual(index.exactSearch(all[q]!, 10));
        again.setMany([500, 501], [all[600]!, all[601]!]);
        expect(again.exactSearch(all[601]!, 1)[0]!.doc).toBe(501);
        expect(again.exactSearch(all[7]!, 1)[0]!.doc).toBe(7);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps codes of many chunks: saved chunk by chunk, copied on write only where a snapshot covers them, read back and grown past the last', () => {
    const dir = mkdtempSync(join(tmpdir(), 'askbus-vectors-'));
    try {
      // 10,000 documents: chunks of 4,096, the last one short
      const many = vectors(10_050, dims);
      const n = 10_000;
      const index = new VectorIndex(dims);
      index.setMany(
        many.slice(0, n).map((_, i) => i),
        many.slice(0, n),
      );
      const parts = index.save(join(dir, 'g.usearch'));
      const saved = Buffer.concat(parts);
      expect(parts.length).toBeGreaterThan(4); // header, documents, scales and a part per chunk
      index.set(5_000, many[10_020]!); // in the snapshot's second chunk: that chunk copied first
      index.set(n, many[10_030]!); // past the snapshot, in its last chunk: in place
      expect(Buffer.concat(parts).equals(saved)).toBe(true);
      expect(index.exactSearch(many[10_020]!, 1)[0]!.doc).toBe(5_000);
      expect(index.exactSearch(many[10_030]!, 1)[0]!.doc).toBe(n);
      writeFileSync(join(dir, 'codes.bin'), saved);
      const again = new VectorIndex(dims);
      again.load(join(dir, 'g.usearch'), readFileSync(join(dir, 'codes.bin')));
      expect(again.size).toBe(n);
      for (const q of [0, 4_095, 4_096, 8_191, 8_192, 9_999])
        expect(again.exactSearch(many[q]!, 1)[0]).toEqual({ doc: q, score: expect.closeTo(1, 3) });
      // grown past the short last chunk and into a new one, the read documents unchanged
      again.setMany([n, n + 1, 12_500], [many[10_040]!, many[10_041]!, many[10_042]!]);
      expect(again.exactSearch(many[10_041]!, 1)[0]!.doc).toBe(n + 1);
      expect(again.exactSearch(many[10_042]!, 1)[0]!.doc).toBe(12_500);
      expect(again.exactSearch(many[9_999]!, 1)[0]!.doc).toBe(9_999);
      expect(again.search(many[8_200]!, 1)[0]!.doc).toBe(8_200);
      // an exact scan over chunks, filtered: the cosines of the vectors themselves, best first
      const odd = DocSet.of(Array.from({ length: 6_000 }, (_, i) => 2 * i + 1));
      const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
      for (const q of [10, 4_100, 9_000]) {
        const expected = [...odd]
          .filter((d) => d < n)
          .map((d) => ({ d, c: cos(many[q]!, many[d]!) }))
          .sort((x, y) => y.c - x.c)
          .slice(0, 20);
        const got = again.exactSearch(many[q]!, 20, odd);
        got.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.c, 3));
        expect(got.every((h) => h.doc % 2 === 1)).toBe(true);
      }
      // saved with gaps (copied chunk by chunk), read back into the live layout
      again.delete(4_097);
      again.delete(0);
      const gappy = Buffer.concat(again.save(join(dir, 'g2.usearch')));
      const third = new VectorIndex(dims);
      third.load(join(dir, 'g2.usearch'), gappy);
      expect(third.size).toBe(again.size);
      for (const q of [1, 4_096, 4_098, 9_999, 10_041, 10_042])
        expect(third.exactSearch(many[q]!, 5)).toEqual(again.exactSearch(many[q]!, 5));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers an exact scan with the SIMD kernel as in plain JavaScript, near ties and exact ties included', () => {
    // 512 entries (the local model's), 9,600 documents over three chunks: 300 groups of 30
    // near-copies (a few entries moved by 1e-4, well inside the kernel's rounding of the
    // query) with exact copies among them, so the k-th best is surrounded by near ties
    const wide = 512;
    const bases = vectors(300, wide);
    let seed = 11;
    const next = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const docs = Array.from({ length: 9_000 }, (_, d) => d);
    const rows = docs.map((d) => {
      const v = Float32Array.from(bases[d % 300]!);
      if (d % 7 !== 0) for (let i = 0; i < 3; i++) v[Math.floor(next() * wide)]! += (next() - 0.5) * 2e-4;
      return v;
    });
    // and 600 documents whose cosines with `aimed` step by 1e-6 (a third of them tied) while
    // each is otherwise a different direction: the kernel's errors differ from one to the next
    // and are larger than the steps, so its order alone would be wrong
    const aimed = bases[42]!;
    for (let d = 9_000; d < 9_600; d++) {
      const w = Float32Array.from({ length: wide }, () => next() - 0.5);
      const along = w.reduce((sum, x, i) => sum + x * aimed[i]!, 0);
      w.forEach((x, i) => (w[i] = x - along * aimed[i]!));
      const wNorm = Math.hypot(...w);
      const cos = 0.8 + (d % 3 === 0 ? 0 : (d % 200) * 1e-6);
      const sin = Math.sqrt(1 - cos * cos);
      docs.push(d);
      rows.push(aimed.map((x, i) => cos * x + (sin * w[i]!) / wNorm));
    }
    const index = new VectorIndex(wide);
    index.setMany(docs, rows);
    for (let d = 0; d < 9_600; d += 97) index.delete(d);
    const dense = Float32Array.from({ length: wide }, () => next() - 0.5);
    const queries = [bases[3]!, bases[150]!.map((x, i) => x + (i % 5 === 0 ? 0.01 : 0)), dense, aimed];
    const filters = [
      undefined,
      DocSet.of(docs.filter((d) => d >= 3_000 && d < 7_500)),
      DocSet.of(docs.filter((d) => d % 3 === 1 || d % 300 === 3)),
      DocSet.of([...docs.filter((d) => d % 300 === 150), 12_345]),
      DocSet.of(docs.filter((d) => d >= 8_990)),
    ];
    let compared = 0;
    for (const query of queries)
      for (const filter of filters)
        for (const [k, minScore] of [
          [1, 0],
          [10, 0],
          [50, 0],
          [50, 0.5],
          [20_000, 0.2],
        ] as const) {
          const plain = index.exactSearch(query, k, filter, minScore, { simd: false });
          expect(index.exactSearch(query, k, filter, minScore)).toEqual(plain);
          compared += plain.length;
        }
    expect(compared).toBeGreaterThan(4_000);
  });

  it('finds k in a filter even when the nearest vectors of all lie outside it', () => {
    // 4,500 vectors of the first 56 entries (the filter: 90%) and 500 near one direction of the
    // last 8 entries; the query points there, a little toward the first 56 too: its first
    // hundreds of neighbours are all outside the filter
    const many = vectors(4_500, 56).map((v) => Float32Array.from([...v, ...new Float32Array(8)]));
    const towards = Float32Array.from({ length: dims }, (_, i) => (i >= 56 ? 1 : 0));
    const few = vectors(500, dims).map((noise) => unit(towards.map((x, i) => x + 0.2 * noise[i]!)));
    const index = new VectorIndex(dims);
    const all = [...many, ...few];
    index.setMany(
      all.map((_, i) => i),
      all,
    );
    const query = unit(towards.map((x) => x + 0.05));
    const filter = DocSet.of(many.map((_, i) => i));
    const exact = index.exactSearch(query, 20, filter, 0.01);
    expect(exact).toHaveLength(20);
    const graph = index.search(query, 20, filter, 0.01, true);
    expect(graph).toHaveLength(20);
    expect(graph.filter((h) => exact.some((e) => e.doc === h.doc)).length).toBeGreaterThanOrEqual(18);
  });
});

function unit(v: Float32Array): Float32Array {
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}
