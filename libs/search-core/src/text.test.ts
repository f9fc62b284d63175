import { describe, expect, it } from 'vitest';
import { analyze, normalizeTokens, parseQuery, processTerm, stem, tokenize } from './index';

describe('tokenize', () => {
  it('lowercases, folds accents and splits on anything but letters and digits', () => {
    expect(tokenize('Le Fabuleux destin d’Amélie Poulain')).toEqual([
      'le',
      'fabuleux',
      'destin',
      'd',
      'amelie',
      'poulain',
    ]);
    expect(tokenize('Thriller/Suspense, sci-fi & 2001: A Space Odyssey')).toEqual([
      'thriller',
      'suspense',
      'sci',
      'fi',
      '2001',
      'a',
      'space',
      'odyssey',
    ]);
    expect(tokenize("Schindler's List")).toEqual(['schindler', 'list']);
    expect(tokenize('Ёжик в тумане')).toEqual(['ежик', 'в', 'тумане']);
    expect(tokenize('  -- ')).toEqual([]);
  });
});

describe('analysis', () => {
  it('drops stopwords and stems with Porter', () => {
    expect(processTerm('the')).toBeNull();
    expect(processTerm('the', true)).toBe('the');
    expect(stem('westerns')).toBe('western');
    expect(stem('comedies')).toBe(stem('comedy'));
    expect(stem('1985')).toBe('1985');
    expect(analyze('Westerns with Clint Eastwood')).toEqual(['western', 'clint', 'eastwood']);
  });

  it('meets index and query on the same words through synonyms', () => {
    expect(normalizeTokens(['sci', 'fi', 'films'])).toEqual(['science', 'fiction', 'movie']);
    expect(normalizeTokens(['scifi'])).toEqual(['science', 'fiction']);
    expect(normalizeTokens(['japanese', 'automobile'])).toEqual(['japan', 'car']);
    expect(analyze('American vehicles')).toEqual(analyze('USA car'));
    expect(analyze('Science Fiction')).toEqual(analyze('scifi'));
    expect(analyze('chevy')).toEqual(analyze('Chevrolet'));
  });
});

describe('parseQuery', () => {
  it('splits a query into content words, type words and intents', () => {
    const q = parseQuery('fuel efficient Japanese cars');
    expect(q.requirements).toEqual([
      { label: 'fuel efficient', terms: ['fuel', 'effici'], intent: 'efficiency' },
      { label: 'japanese', terms: ['japan'] },
      { label: 'cars', terms: ['car'], types: ['Car', 'Vehicle'] },
    ]);
    expect(q.intents).toEqual(['efficiency']);
    // type words are left to `types`, intent words flagged so an index can weigh them lightly
    expect(q.searchTerms).toEqual(['fuel', 'effici', 'japan']);
    expect(q.intentTerms).toEqual(['fuel', 'effici']);
    expect(q.types).toEqual(['Car', 'Vehicle']);
    expect(parseQuery('movies').searchTerms).toEqual(['movi']);
  });

  it('records adjacent words as pairs for the phrase bonus, broken by stopwords and intents', () => {
    expect(parseQuery('westerns with clint eastwood').pairs).toEqual([['clint', 'eastwood']]);
    expect(parseQuery('best sci-fi movies').pairs).toEqual([
      ['scienc', 'fiction'],
      ['fiction', 'movi'],
    ]);
  });

  it('finds intents in phrases and words', () => {
    expect(parseQuery('top rated dramas').intents).toEqual(['rating']);
    expect(parseQuery('cars with good mileage').intents).toEqual(['efficiency']);
    expect(parseQuery('fast powerful cars').intents).toEqual(['power']);
    expect(parseQuery('classic westerns').intents).toEqual(['old']);
    expect(parseQuery('recent thrillers').intents).toEqual(['recent']);
  });

  it('falls back to stopwords when the query has nothing else, and survives empty input', () => {
    expect(parseQuery('Up').requirements).toEqual([{ label: 'up', terms: ['up'] }]);
    expect(parseQuery('?!').requirements).toEqual([]);
    expect(parseQuery('movies movies films').requirements).toHaveLength(1);
  });
});
