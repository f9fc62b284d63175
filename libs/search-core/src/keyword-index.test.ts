import { describe, expect, it } from 'vitest';
import { DocSet, KeywordIndex, withinOneEdit, type ItemFields } from './index';

const doc = (name: string, text = '', categories: string[] = []): ItemFields => ({
  name: [name],
  people: [],
  categories,
  text: text ? [text] : [],
});

function sample(): KeywordIndex {
  const index = new KeywordIndex();
  index.add(0, doc('Pale Rider', 'a western with a preacher', ['Western']));
  index.add(1, doc('High Plains Drifter', 'a stranger rides into town', ['Western']));
  index.add(2, doc('Up', 'an old man flies his house with balloons', ['Kids Fiction']));
  index.add(3, doc('Alien', 'a creature hunts the crew of a spaceship', ['Horror', 'Science Fiction']));
  index.add(4, doc('Westworld', 'a theme park of robots', ['Science Fiction']));
  return index;
}

describe('DocSet', () => {
  it('adds, deletes, counts, iterates in order, and combines', () => {
    const a = DocSet.of([5, 1, 70, 31, 32]);
    expect([...a]).toEqual([1, 5, 31, 32, 70]);
    expect(a.size).toBe(5);
    a.delete(31);
    expect(a.has(31)).toBe(false);
    expect(a.has(1000)).toBe(false);
    const b = DocSet.of([5, 70, 99]);
    expect([...DocSet.intersection(a, b)]).toEqual([5, 70]);
    expect([...DocSet.union([a, b])]).toEqual([1, 5, 32, 70, 99]);
    expect([...DocSet.difference(a, b)]).toEqual([1, 32]);
    expect([...DocSet.difference(b, a)]).toEqual([99]);
    expect([...a]).toEqual([1, 5, 32, 70]); // neither changed
    expect([...b]).toEqual([5, 70, 99]);
  });

  it('adds a list at once, growing past its capacity', () => {
    const s = new DocSet(64);
    s.addAll(Uint32Array.from([3, 63, 64, 3, 1_000]));
    s.addAll([]);
    expect([...s]).toEqual([3, 63, 64, 1_000]);
    expect([...DocSet.difference(s, DocSet.of([3, 5_000]))]).toEqual([63, 64, 1_000]);
  });
});

describe('withinOneEdit', () => {
  it('accepts one substitution, insertion or deletion and nothing more', () => {
    expect(withinOneEdit('western', 'westren')).toBe(false);
    expect(withinOneEdit('western', 'wostern')).toBe(true);
    expect(withinOneEdit('western', 'westerns')).toBe(true);
    expect(withinOneEdit('western', 'wester')).toBe(true);
    expect(withinOneEdit('western', 'western')).toBe(true);
    expect(withinOneEdit('western', 'easter')).toBe(false);
  });
});

describe('KeywordIndex', () => {
  it('ranks by weighted fields: a word in the title before one in the text', () => {
    const index = sample();
    const hits = index.search(['western'], 10);
    expect(hits.map((h) => h.doc)).toEqual([0, 1]);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
  });

  it('puts documents matching more of the query first', () => {
    const hits = sample().search(['scienc', 'fiction', 'creatur'], 10);
    expect(hits[0]!.doc).toBe(3);
  });

  it('keeps stopwords in titles, matches typos and a prefix of the last word', () => {
    const index = sample();
    expect(index.search(['up'], 10).map((h) => h.doc)).toEqual([2]);
    expect(index.search(['wastern'], 10).map((h) => h.doc)).toEqual([0, 1]); // one edit
    expect(index.search(['westw'], 10).map((h) => h.doc)).toEqual([4]); // prefix
    expect(index.search(['westw', 'alien'], 10).map((h) => h.doc)).toEqual([3]); // prefix only on the last word
  });

  it('filters with a document set and forgets removed documents', () => {
    const index = sample();
    expect(index.search(['western'], 10, DocSet.of([1, 2])).map((h) => h.doc)).toEqual([1]);
    index.remove(0, doc('Pale Rider', 'a western with a preacher', ['Western']));
    expect(index.search(['western'], 10).map((h) => h.doc)).toEqual([1]);
    expect(index.documentCount).toBe(4);
    expect(index.deadShare).toBeGreaterThan(0);
    index.compact();
    expect(index.deadShare).toBe(0);
    expect(index.search(['western'], 10).map((h) => h.doc)).toEqual([1]);
  });

  it('reads back what it wrote, and keeps indexing after', () => {
    const index = sample();
    const again = KeywordIndex.load(index.serialize());
    for (const q of [['western'], ['scienc', 'fiction'], ['up'], ['westw']])
      expect(again.search(q, 10)).toEqual(index.search(q, 10));
    again.add(7, doc('The Good, the Bad and the Ugly', 'a western', ['Western']));
    expect(again.search(['western'], 10).map((h) => h.doc)).toContain(7);
    expect(() => KeywordIndex.load(Buffer.from('nonsense'))).toThrow();
    expect(() => KeywordIndex.load(index.serialize().subarray(0, 100))).toThrow();
  });

  it('ranks a small filter by looking its documents up in long lists, as the whole lists rank them', () => {
    // words from a small vocabulary, so lists run from a few documents to most of them
    let seed = 7;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const words = ['drama', 'comedy', 'crime', 'music', 'war', 'family', 'space', 'chess', 'river', 'gold'];
    const pick = (n: number): string =>
      Array.from({ length: n }, () => words[Math.floor(rnd() ** 2 * words.length)]).join(' ');
    const fields = (d: number): ItemFields => doc(`${pick(2)} ${d}`, pick(6), [pick(1)]);
    const index = new KeywordIndex();
    for (let d = 0; d < 4_000; d++) index.add(d, fields(d));
    // removed documents stay in the lists until a compact; some compacted away, some not
    for (let d = 0; d < 4_000; d += 13) index.remove(d, fields(d));
    index.compact();
    for (let d = 5; d < 4_000; d += 17) index.remove(d, fields(d));
    for (let d = 4_000; d < 4_300; d++) index.add(d, fields(d));
    const all = Array.from({ length: 4_300 }, (_, d) => d);
    for (const terms of [['drama'], ['music', 'chess'], ['crime', 'famil'], ['comedy', 'war', 'gold']]) {
      const ranked = index.search(terms, 10_000);
      for (const share of [0.002, 0.02, 0.2, 0.9]) {
        const filter = DocSet.of(all.filter(() => rnd() < share));
        const expected = ranked.filter((h) => filter.has(h.doc)).slice(0, 25);
        expect(index.search(terms, 25, filter)).toEqual(expected);
      }
    }
  });

  it('keeps the k best, whatever the number of matches', () => {
    const index = new KeywordIndex();
    for (let d = 0; d < 500; d++) index.add(d, doc(`movie ${d}`, d % 7 === 0 ? 'movie movie movie' : ''));
    const hits = index.search(['movi'], 10);
    expect(hits).toHaveLength(10);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
    expect(hits.every((h) => h.doc % 7 === 0)).toBe(true);
  });

  it('settles every impact before a save: queries after it find nothing to recompute, and rank the same', () => {
    const build = () => {
      const index = new KeywordIndex();
      // the index grows from one document to 400: every early impact's counts drift
      for (let d = 0; d < 400; d++)
        index.add(
          d,
          doc(`movie ${d}`, d % 3 === 0 ? 'a western movie' : 'a comedy', d % 5 ? [] : ['Western']),
        );
      return index;
    };
    const settled = build();
    const unsettled = build();
    settled.settle();
    const saved = settled.serialize();
    for (const q of [['movi'], ['western'], ['comedi', 'movi']]) {
      expect(settled.search(q, 20)).toEqual(unsettled.search(q, 20));
      // a query would have written the impacts it recomputed (and their counts) into the index
      expect(settled.serialize().equals(saved)).toBe(true);
    }
    expect(unsettled.serialize().equals(saved)).toBe(true);
  });

  it('writes its parts apart from the live index: changes after serializeParts leave them as they were', () => {
    const index = new KeywordIndex();
    for (let d = 0; d < 50; d++) index.add(d, doc(`movie ${d}`, d % 2 ? 'a western' : 'a comedy', []));
    const parts = index.serializeParts();
    const saved = Buffer.concat(parts);
    expect(index.serialize().equals(saved)).toBe(true);
    index.remove(3);
    index.add(50, doc('movie 50', 'a western comedy', ['Western']));
    index.settle();
    expect(Buffer.concat(parts).equals(saved)).toBe(true);
    expect(index.serialize().equals(saved)).toBe(false);
  });

  it('writes its postings as they lie: a compact or a recompute copies them until the save is written', () => {
    const build = (): KeywordIndex => {
      const index = new KeywordIndex();
      // long postings (written as views of the index's own arrays) and short ones (gathered)
      for (let d = 0; d < 40_000; d++)
        index.add(d, doc(`movie ${d}`, d % 2 ? 'a western' : 'a comedy', d % 1000 ? [] : ['Western']));
      return index;
    };
    const index = build();
    const parts = index.serializeParts();
    const save = index.saveNumber;
    const saved = Buffer.concat(parts);
    for (let d = 0; d < 40_000; d += 3) index.remove(d, doc(`movie ${d}`, d % 2 ? 'a western' : 'a comedy'));
    index.compact();
    index.settle();
    index.add(40_000, doc('movie 40000', 'a western comedy', ['Western']));
    expect(Buffer.concat(parts).equals(saved)).toBe(true);
    expect(KeywordIndex.load(saved).search(['western'], 5)).toEqual(build().search(['western'], 5));
    // once written, nothing reads the parts: changes go where the postings lie, no copy made
    index.written(save);
    const next = index.serializeParts();
    index.written(index.saveNumber);
    const written = Buffer.concat(next);
    index.remove(1, doc('movie 1', 'a western'));
    index.compact();
    expect(Buffer.concat(next).equals(written)).toBe(false);
    expect(KeywordIndex.load(index.serialize()).search(['western'], 5)).toEqual(index.search(['western'], 5));
  });
});
