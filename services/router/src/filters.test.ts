import { describe, expect, it } from 'vitest';
import type { RetrievedItem } from '@askbus/contracts';
import { passesFilters, typesOf } from './filters';

const movie = (schema: Record<string, unknown>): RetrievedItem => ({
  url: 'https://t.test/m',
  name: 'Pale Rider',
  site: 'movies',
  '@type': 'Movie',
  schema_object: { '@type': 'Movie', name: 'Pale Rider', ...schema },
  retrievalScore: 1,
});

describe('retrieval filters', () => {
  it('hands type filters to the retriever', () => {
    expect(typesOf({ type: 'Movie', genre: 'Western' })).toEqual(['Movie']);
    expect(typesOf({ '@type': ['Car', 'Product'] })).toEqual(['Car', 'Product']);
    expect(typesOf({ genre: 'Western' })).toBeUndefined();
    expect(typesOf(undefined)).toBeUndefined();
  });

  it('keeps items whose property matches, as text, ignoring case', () => {
    const item = movie({
      genre: ['Western'],
      datePublished: '1985-06-28',
      director: { '@type': 'Person', name: 'Clint Eastwood' },
    });
    expect(passesFilters(item, { genre: 'western' })).toBe(true);
    expect(passesFilters(item, { datePublished: 1985 })).toBe(true);
    expect(passesFilters(item, { director: 'eastwood' })).toBe(true);
    expect(passesFilters(item, { genre: ['Comedy', 'Western'] })).toBe(true);
    expect(passesFilters(item, { genre: 'Comedy' })).toBe(false);
    expect(passesFilters(item, { genre: 'Western', datePublished: 1999 })).toBe(false);
  });

  it('ignores filters on properties the item does not have, and the type (the retriever did it)', () => {
    const item = movie({ genre: ['Western'] });
    expect(passesFilters(item, { location: 'Seattle', price: 10 })).toBe(true);
    expect(passesFilters(item, { type: 'Car' })).toBe(true);
    expect(passesFilters(item, undefined)).toBe(true);
  });
});
