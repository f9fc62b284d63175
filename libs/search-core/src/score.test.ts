import { describe, expect, it } from 'vitest';
import { loadDemoSites } from '@askbus/demo-data';
import type { StoredItem } from '@askbus/contracts';
import { analyzeItem, flattenItem, parseQuery, scoreItem, type ItemLike } from './index';

const movie = (schema: Record<string, unknown>): ItemLike => ({
  name: String(schema.name ?? ''),
  '@type': 'Movie',
  schema_object: { '@context': 'https://schema.org', '@type': 'Movie', ...schema },
});

const [movies, cars] = loadDemoSites().map((s) => s.items) as [StoredItem[], StoredItem[]];

/** All items scored for one query, best first (ties in input order). */
function rank(query: string, items: StoredItem[]) {
  const parsed = parseQuery(query);
  return items.map((item) => ({ item, ...scoreItem(parsed, item) })).sort((a, b) => b.score - a.score);
}

describe('flattenItem', () => {
  it('sorts an item into name, people, categories and text', () => {
    const fields = flattenItem(
      movie({
        name: 'Pale Rider',
        url: 'https://example.com/pale-rider',
        director: { '@type': 'Person', name: 'Clint Eastwood', url: 'https://example.com/ce' },
        genre: ['Western', 'Historical Fiction'],
        description: 'A preacher rides into town.',
        productionCompany: { '@type': 'Organization', name: 'Warner Bros.' },
        aggregateRating: { '@type': 'AggregateRating', ratingValue: 7.1 },
      }),
    );
    expect(fields).toEqual({
      name: ['Pale Rider'],
      people: ['Clint Eastwood'],
      categories: ['Movie', 'Western', 'Historical Fiction'],
      text: ['A preacher rides into town.', 'Warner Bros.'],
    });
  });

  it('copes with odd shapes: arrays of types, nulls, deep nesting, numbers', () => {
    const deep: Record<string, unknown> = { name: 'bottom' };
    let node = deep;
    for (let i = 0; i < 50; i++) node = { child: node };
    const fields = flattenItem({
      schema_object: {
        '@type': ['TVSeries', 'CreativeWork'],
        name: null,
        author: ['Ann', 3, null],
        extra: node,
        n: 5,
      },
    });
    expect(fields.categories).toEqual(['TV Series', 'Creative Work']);
    expect(fields.people).toEqual(['Ann']);
    expect(fields.name).toEqual([]);
    expect(fields.text).toEqual([]); // too deep to follow
  });
});

describe('scoreItem', () => {
  const eastwoodWestern = movie({
    name: 'Pale Rider',
    director: { '@type': 'Person', name: 'Clint Eastwood' },
    genre: ['Western'],
    datePublished: '1985-06-28',
  });

  it('explains a full match in one line', () => {
    expect(scoreItem('westerns with clint eastwood', eastwoodWestern)).toEqual({
      score: 100,
      description: 'matches: westerns, clint, eastwood',
    });
  });

  it('says what did not match when the score is low', () => {
    const other = movie({ name: 'Open Range', director: { name: 'Kevin Costner' }, genre: ['Western'] });
    const r = scoreItem('westerns with clint eastwood', other);
    expect(r.score).toBe(32);
    expect(r.description).toBe('matches: westerns; does not match: clint, eastwood');
  });

  it('rewards a phrase found contiguously in one field', () => {
    const split = movie({ name: 'X', actor: [{ name: 'Clint Walker' }, { name: 'Scott Eastwood' }] });
    const together = movie({ name: 'X', director: { name: 'Clint Eastwood' }, genre: ['Comedy'] });
    expect(scoreItem('clint eastwood', split).score).toBe(95);
    expect(scoreItem('clint eastwood', together).score).toBe(100);
    expect(scoreItem('clint eastwood comedy', together).score).toBe(100);
  });

  it('counts a word naming the item type as matched, and weights fields', () => {
    expect(scoreItem('movies', eastwoodWestern).score).toBe(100);
    const inText = movie({ name: 'Y', description: 'a western of sorts' });
    const inGenre = movie({ name: 'Y', genre: ['Western'] });
    expect(scoreItem('western', inGenre).score).toBeGreaterThan(scoreItem('western', inText).score);
  });

  it('is deterministic and bounded, even for odd input', () => {
    const odd: ItemLike = { schema_object: { '@type': 42, name: { nested: true }, genre: [null, 7] } };
    for (const q of ['westerns with clint eastwood', 'the', '!!', 'fast cars', 'x'.repeat(5000)]) {
      const a = scoreItem(q, odd);
      expect(a).toEqual(scoreItem(q, odd));
      expect(Number.isInteger(a.score)).toBe(true);
      expect(a.score).toBeGreaterThanOrEqual(0);
      expect(a.score).toBeLessThanOrEqual(100);
      expect(a.description).not.toMatch(/\n/);
    }
    expect(scoreItem('!!', eastwoodWestern).score).toBe(0);
  });

  it('accepts a pre-analyzed item', () => {
    expect(scoreItem('pale rider', analyzeItem(eastwoodWestern))).toEqual(
      scoreItem('pale rider', eastwoodWestern),
    );
  });
});

describe('scoreItem on the demo data', () => {
  it('puts the two Eastwood westerns above every other movie for "westerns with clint eastwood"', () => {
    const ranked = rank('westerns with clint eastwood', movies);
    expect(ranked).toHaveLength(movies.length);
    const top = ranked
      .slice(0, 2)
      .map((r) => r.item.name)
      .sort();
    expect(top).toEqual(['High Plains Drifter', 'Pale Rider']);
    expect(ranked[2]!.score).toBeLessThan(ranked[1]!.score);
    expect(ranked[0]!.description).toBe('matches: westerns, clint, eastwood');
    // then Eastwood's other films, then other westerns
    expect(ranked[2]!.item.schema_object.director).toEqual({ '@type': 'Person', name: 'Clint Eastwood' });
    expect(ranked[2]!.description).toContain('does not match: westerns');
  });

  it('scores every demo item without throwing', () => {
    for (const item of [...movies.slice(0, 200), ...cars])
      expect(scoreItem('fast cars', item).score).toBeGreaterThanOrEqual(0);
  });
});
