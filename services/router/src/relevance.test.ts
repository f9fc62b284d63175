import { describe, expect, it } from 'vitest';
import { WordNet } from '@askbus/embeddings';
import type { Understanding } from '@askbus/contracts';
import { foreignTypes, SchemaTypeWords } from './relevance';

const words = new SchemaTypeWords(WordNet.get());

const types = (query: string): string[] => words.named(query).map((n) => n.type);
const named = (...names: string[]) => names.map((type) => ({ type, word: type.toLowerCase() }));

const understanding = (over: Partial<Understanding> = {}): Understanding =>
  ({ constraints: [], orders: [], named: [], types: [], ...over }) as unknown as Understanding;

describe('SchemaTypeWords', () => {
  it('reads the types a question asks for through WordNet: synonyms, plurals and kinds', () => {
    expect(types('a chocolate cake recipe')).toEqual(['Recipe']);
    expect(types('old films')).toEqual(['Movie']);
    expect(types('a used automobile')).toEqual(['Car']);
    expect(types('cheap sedans')).toEqual(['Car']);
    expect(types('hotels in Paris')).toEqual(['Hotel']);
  });

  it('reads only the head: not a verb, not a place after a preposition, not a broad or abstract type', () => {
    expect(types('where can I book a table')).toEqual([]);
    expect(types('laptops in stock')).toEqual([]);
    expect(types('laptops available in store')).toEqual([]);
    expect(types('recipes for 6 people')).toEqual(['Recipe']);
    expect(types('statistics about laptops')).toEqual([]);
    expect(types('jobs for a director')).toEqual([]);
  });
});

describe('foreignTypes', () => {
  it('is what the question asks for when no site type is it, or a kind of it, either way', () => {
    expect(foreignTypes(named('Recipe'), ['Movie'], understanding())).toEqual(['Recipe']);
    expect(foreignTypes(named('Car'), ['Product'], understanding())).toEqual([]);
    expect(foreignTypes(named('Vehicle'), ['Car'], understanding())).toEqual([]);
    expect(foreignTypes(named('Hotel', 'Restaurant'), ['Restaurant'], understanding())).toEqual([]);
    expect(foreignTypes([], ['Movie'], understanding())).toEqual([]);
  });

  it('leaves out a word the site’s data holds, not one beside it', () => {
    const read = (phrase: string): Understanding =>
      understanding({ constraints: [{ kind: 'value', phrase }] } as unknown as Partial<Understanding>);
    // "books by Stephen King" on a movie site: the source "Based on Book/Short Story"
    expect(foreignTypes([{ type: 'Book', word: 'books' }], ['Movie'], read('book'))).toEqual([]);
    // "hotels in Seattle" on a restaurant site: Seattle is in its data, hotels are not
    expect(foreignTypes([{ type: 'Hotel', word: 'hotels' }], ['Restaurant'], read('in seattle'))).toEqual([
      'Hotel',
    ]);
  });
});
