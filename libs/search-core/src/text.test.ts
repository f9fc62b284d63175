import { describe, expect, it } from 'vitest';
import { analyze, parseQuery, processTerm, stem, tokenize } from './index';

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

  it('has no vocabulary of its own: words mean themselves (the understand library reads meaning)', () => {
    expect(analyze('Science Fiction films')).toEqual(['scienc', 'fiction', 'film']);
    expect(analyze('japanese')).toEqual(['japanes']);
  });
});

describe('parseQuery', () => {
  it('turns a query into its content words, stemmed', () => {
    const q = parseQuery('fuel efficient Japanese cars');
    expect(q.requirements).toEqual([
      { label: 'fuel', terms: ['fuel'] },
      { label: 'efficient', terms: ['effici'] },
      { label: 'japanese', terms: ['japanes'] },
      { label: 'cars', terms: ['car'] },
    ]);
    expect(q.searchTerms).toEqual(['fuel', 'effici', 'japanes', 'car']);
  });

  it('records adjacent words as pairs for the phrase bonus, broken by stopwords', () => {
    expect(parseQuery('westerns with clint eastwood').pairs).toEqual([['clint', 'eastwood']]);
    expect(parseQuery('best sci-fi movies').pairs).toEqual([
      ['best', 'sci'],
      ['sci', 'fi'],
      ['fi', 'movi'],
    ]);
  });

  it('falls back to stopwords when the query has nothing else, and survives empty input', () => {
    expect(parseQuery('Up').requirements).toEqual([{ label: 'up', terms: ['up'] }]);
    expect(parseQuery('?!').requirements).toEqual([]);
    expect(parseQuery('movies movies').requirements).toHaveLength(1);
  });
});
