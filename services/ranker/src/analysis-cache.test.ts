import { describe, expect, it } from 'vitest';
import { RankItem, toRankItem, Understanding } from '@askbus/contracts';
import { BusError } from '@askbus/bus';
import { AnalysisCache } from './analysis-cache';
import { rankAnalysed, rankItems } from './rank';
import { movieBatch } from './fixtures';

const query = 'westerns with clint eastwood';

describe('RankItem', () => {
  it('carries what the ranker reads: no site, no @context, the schema as JSON text', () => {
    const [movie] = movieBatch();
    const sent = RankItem.parse(toRankItem(movie!));
    expect(Object.keys(sent).sort()).toEqual(['@type', 'name', 'schema', 'url']);
    const schema = JSON.parse(sent.schema) as Record<string, unknown>;
    expect(schema['@context']).toBeUndefined();
    expect(schema.director).toEqual(movie!.schema_object.director);
  });
});

describe('AnalysisCache', () => {
  it('scores as the uncached scorer does, and analyses each item once', () => {
    const cache = new AnalysisCache(100);
    const items = movieBatch();
    const expected = rankItems(query, items);
    for (let i = 0; i < 3; i++) {
      const analysed = items.map((m) => cache.analyse(toRankItem(m)));
      expect(rankAnalysed(query, analysed)).toEqual(expected);
    }
    expect(cache.misses).toBe(items.length);
    expect(cache.hits).toBe(2 * items.length);
  });

  it('scores an understood question as the uncached scorer does', () => {
    const cache = new AnalysisCache(100);
    const items = movieBatch();
    const understanding = Understanding.parse({
      text: 'westerns from the 1980s with eastwood',
      freeText: 'eastwood',
      constraints: [
        { kind: 'value', path: 'genre', values: ['western'], phrase: 'westerns', text: 'in Western' },
        {
          kind: 'range',
          target: { path: 'datePublished' },
          min: 1980,
          max: 1990,
          maxInclusive: false,
          phrase: 'from the 1980s',
          text: 'from the 1980s',
        },
      ],
      asked: ['genre', 'datePublished'],
    });
    const expected = rankItems(query, items, understanding);
    items.forEach((m) => cache.analyse(toRankItem(m)));
    const analysed = items.map((m) => cache.analyse(toRankItem(m)));
    expect(rankAnalysed(query, analysed, understanding)).toEqual(expected);
  });

  it('analyses an item again when it changed, and keeps at most maxItems', () => {
    const cache = new AnalysisCache(3);
    const [first, ...rest] = movieBatch();
    const before = rankItems(query, [first!])[0]!;
    cache.analyse(toRankItem(first!));
    const changed = {
      ...first!,
      schema_object: { ...first!.schema_object, genre: ['Comedy'], director: 'Someone Else' },
    };
    const after = rankAnalysed(query, [cache.analyse(toRankItem(changed))])[0]!;
    expect(after.score).toBeLessThan(before.score);
    expect(cache.misses).toBe(2);
    for (const m of rest) cache.analyse(toRankItem(m));
    expect(cache.size).toBe(3);
    // the least recently used (the changed first item) was dropped
    cache.analyse(toRankItem(changed));
    expect(cache.misses).toBe(2 + rest.length + 1);
  });

  it('refuses a schema that is not a JSON object as a bad request', () => {
    const cache = new AnalysisCache(10);
    for (const schema of ['{"a":', '[1,2]', '"text"']) {
      const err = (() => {
        try {
          cache.analyse({ url: 'https://x.test/1', name: 'x', '@type': 'Thing', schema });
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(BusError);
      expect((err as BusError).code).toBe('bad_request');
    }
  });

  it('keeps nothing with maxItems 0', () => {
    const cache = new AnalysisCache(0);
    const [m] = movieBatch();
    cache.analyse(toRankItem(m!));
    cache.analyse(toRankItem(m!));
    expect(cache.size).toBe(0);
    expect(cache.misses).toBe(2);
  });
});
