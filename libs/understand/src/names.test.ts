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
