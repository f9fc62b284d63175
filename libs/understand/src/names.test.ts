import { describe, expect, it } from 'vitest';
import { NameIndex, type IndexedName } from './names';

const entries: IndexedName[] = [
  { url: 'u1', name: 'Toyota Corolla 1200', site: 'cars', type: 'Car', year: 1972 },
  { url: 'u2', name: 'Toyota Corolla Liftback', site: 'cars', type: 'Car' },
  { url: 'u3', name: 'The Dark Knight', site: 'movies', type: 'Movie', year: 2008 },
  { url: 'u4', name: 'A Very Long Name Of Seven Words Here', site: 'movies', type: 'Movie' },
  { url: 'u5', name: 'Up', site: 'movies', type: 'Movie' },
  { url: 'u3', name: 'The Dark Knight Rises', site: 'movies', type: 'Movie', year: 2012 },
];

const questions = [
  'toyota corolla from the seventies',
  'is the dark knight rises better than dark knight',
  'a very long name of seven',
  'very long name',
  'up',
];

describe('NameIndex.restore', () => {
  it('finds what an index built one entry at a time finds, with and without saved keys', () => {
    const built = new NameIndex();
    for (const e of entries) built.add(e);
    const fromKeys = new NameIndex();
    fromKeys.add({ url: 'stale', name: 'Gone With The Wind', site: 'movies', type: 'Movie' });
    fromKeys.restore(built.entries(), built.keys());
    const withoutKeys = new NameIndex();
    withoutKeys.restore(built.entries());
    for (const index of [fromKeys, withoutKeys]) {
      expect(index.size).toBe(built.size);
      for (const q of questions) expect(index.find(q)).toEqual(built.find(q));
      // the stale entry went with the restore
      expect(index.find('gone with the wind')).toEqual([]);
    }
  });

  it('keeps the later of two entries of one URL, as add does', () => {
    const index = new NameIndex();
    index.restore(entries);
    expect(index.size).toBe(5);
    // "The Dark Knight" is gone: the words only begin the later name now
    expect(index.find('the dark knight')[0]?.exact).toBe(false);
    expect(index.find('dark knight rises')[0]?.items[0]?.year).toBe(2012);
  });
});

describe('NameIndex.save / load', () => {
  // the numbers a store would save the URLs as (its document numbers)
  const urls = ['u0', 'u1', 'u2', 'u3', 'u4', 'u5', 'u6'];
  const numberOf = (url: string): number | undefined => {
    const n = urls.indexOf(url);
    return n >= 0 ? n : undefined;
  };
  const urlOf = (n: number): string | undefined => urls[n];
  const more: IndexedName[] = [
    ...entries,
    { url: 'u6', name: 'Amélie — Ça ✓ 𝄞', site: 'films', type: 'Movie', year: -44 },
  ];
  const built = (): NameIndex => {
    const index = new NameIndex();
    for (const e of more) index.add(e);
    return index;
  };
  const asked = [...questions, 'amelie ca', 'toyota corolla liftback', 'dark knight'];

  it('reads back the same entries, keys and finds (names, sites, types, years; non-Latin text)', () => {
    const before = built();
    const after = new NameIndex();
    after.add({ url: 'stale', name: 'Gone With The Wind', site: 'movies', type: 'Movie' });
    after.load(before.save(numberOf), urlOf);
    expect(after.size).toBe(before.size);
    expect(after.entries()).toEqual(before.entries());
    expect(after.keys()).toEqual(before.keys());
    for (const q of asked) {
      expect(after.find(q)).toEqual(before.find(q));
      expect(after.find(q, new Set(['movies']))).toEqual(before.find(q, new Set(['movies'])));
    }
    expect(after.find('gone with the wind')).toEqual([]);
    expect(after.find('amelie ca')[0]?.items[0]).toEqual(more.at(-1));
  });

  it('keeps a name with a lone surrogate exactly', () => {
    const index = new NameIndex();
    index.add({ url: 'u0', name: 'Odd \ud800 Name', site: 'x', type: 'Thing' });
    index.add({ url: 'u1', name: 'Plain Name', site: 'x', type: 'Thing', year: 1 });
    const after = new NameIndex();
    after.load(index.save(numberOf), urlOf);
    expect(after.entries()).toEqual(index.entries());
    expect(after.find('odd name')).toEqual(index.find('odd name'));
  });

  it('leaves out entries whose URL has no number, and reads an empty index', () => {
    const index = new NameIndex();
    index.load(
      built().save((url) => (url === 'u1' ? undefined : numberOf(url))),
      urlOf,
    );
    expect(index.entries().map((e) => e.url)).toEqual(['u2', 'u4', 'u5', 'u3', 'u6']);
    const empty = new NameIndex();
    empty.load(new NameIndex().save(numberOf), urlOf);
    expect(empty.size).toBe(0);
    expect(empty.find('dark knight')).toEqual([]);
  });

  it('adds, removes and replaces after a load as an index built one entry at a time does', () => {
    const live = built();
    const loaded = new NameIndex();
    loaded.load(live.save(numberOf), urlOf);
    const changes: Array<IndexedName | string> = [
      'u1',
      { url: 'u3', name: 'The Dark Knight', site: 'movies', type: 'Movie', year: 2008 },
      { url: 'u7', name: 'Toyota Corolla Wagon', site: 'cars', type: 'Car', year: 1975 },
      'u5',
      { url: 'u8', name: 'Up', site: 'movies', type: 'Film' },
      'nowhere',
    ];
    for (const change of changes)
      for (const index of [live, loaded]) {
        if (typeof change === 'string') index.remove(change);
        else index.add(change);
      }
    expect(loaded.entries()).toEqual(live.entries());
    for (const q of [...asked, 'toyota corolla wagon', 'the dark knight'])
      expect(loaded.find(q)).toEqual(live.find(q));
    expect(loaded.find('toyota corolla')[0]?.items.map((i) => i.url)).toEqual(['u2', 'u7']);
    // a second round trip of the changed index
    const again = new NameIndex();
    again.load(
      loaded.save((url) => (url === 'u7' ? 7 : url === 'u8' ? 8 : numberOf(url))),
      (n) => (n === 7 ? 'u7' : n === 8 ? 'u8' : urlOf(n)),
    );
    expect(again.entries()).toEqual(live.entries());
  });

  it('throws on damaged bytes and keeps what it had', () => {
    const saved = built().save(numberOf);
    const index = built();
    const damaged: Uint8Array[] = [
      new Uint8Array(0),
      saved.subarray(0, saved.length - 1),
      Buffer.concat([saved, Buffer.from([0])]),
      Buffer.from('not names at all, just some text of a length'),
    ];
    // a site index past the labels; a number without a URL
    const badSite = Buffer.from(saved);
    const count = saved.readUInt32LE(8);
    badSite.writeUInt32LE(999, 32 + 8 * count + 4 * 3 * count);
    damaged.push(badSite);
    const badNumber = Buffer.from(saved);
    badNumber.writeUInt32LE(999, 32 + 8 * count);
    damaged.push(badNumber);
    for (const bytes of damaged) expect(() => index.load(bytes, urlOf)).toThrow(/damaged/);
    expect(index.entries()).toEqual(built().entries());
  });
});
