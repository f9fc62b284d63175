import { describe, expect, it } from 'vitest';
import { localTaskAnswer } from '@askbus/llm';
import { CompareAnswer, compareItems, type CompareTask } from './task';

const movie = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  '@type': 'Movie',
  schema_object: { '@type': 'Movie', name, ...extra },
});
const rating = (v: number) => ({ aggregateRating: { ratingValue: v, bestRating: 10 } });

describe('the compare task', () => {
  it('gives the verdict to the better rated item', () => {
    const task: CompareTask = {
      kind: 'compare',
      query: 'compare',
      details_requested: 'everything',
      item1: movie('Alien', rating(8.5)),
      item2: movie('Blade Runner', rating(8.3)),
    };
    const cmp = CompareAnswer.parse(localTaskAnswer(task));
    expect(cmp.verdict).toMatch(/Alien comes out ahead on rating/);
    expect(cmp.comparison).toMatch(/^On rating, Alien has .+ and Blade Runner .+\./);
  });

  it('judges a bare comparison on the rating, whatever the order of the fields', () => {
    const product = (name: string, kg: number, stars: number) => ({
      name,
      '@type': 'Product',
      schema_object: {
        '@type': 'Product',
        name,
        weight: { '@type': 'QuantitativeValue', value: kg, unitCode: 'KGM' },
        aggregateRating: { '@type': 'AggregateRating', ratingValue: stars },
      },
    });
    const cmp = compareItems(
      product('Heavy One', 2.2, 1.7),
      product('Light Two', 2.0, 4.4),
      'everything',
      [],
    );
    expect(cmp.verdict).toBe('Light Two comes out ahead on rating.');
    expect(cmp.comparison).toMatch(/^On rating, Heavy One has 1\.7\/5 and Light Two 4\.4\/5\. On weight/);
  });

  it('names a rating that is not the reviewers\' by its own name ("star rating" beside "rating")', () => {
    const hotel = (name: string, stars: number, guests: number) => ({
      name,
      '@type': 'Hotel',
      schema_object: {
        '@type': 'Hotel',
        name,
        starRating: { '@type': 'Rating', ratingValue: stars },
        aggregateRating: { '@type': 'AggregateRating', ratingValue: guests, bestRating: 10 },
      },
    });
    const cmp = compareItems(hotel('Harbor Inn', 3, 8.1), hotel('Grand Hotel', 5, 7.2), 'everything', []);
    expect(cmp.comparison).toContain('On star rating, Harbor Inn has 3/5 and Grand Hotel 5/5.');
    expect(cmp.comparison).toContain('On rating, Harbor Inn has 8.1/10 and Grand Hotel 7.2/10.');
  });

  it('gives the verdict in the question\'s own word to the side it prefers ("cheaper": the lower price)', () => {
    const car = (name: string, price: number) => ({
      name,
      '@type': 'Car',
      schema_object: { '@type': 'Car', name, offers: { price, priceCurrency: 'USD' } },
    });
    const verdict = (direction: 'asc' | 'desc', word: string) =>
      compareItems(
        car('BMW 330i', 15_500),
        car('Honda CR-V', 26_100),
        'offers.price',
        ['offers.price'],
        [{ path: 'offers.price', direction, word }],
      ).verdict;
    expect(verdict('asc', 'cheaper')).toBe('BMW 330i is cheaper: price $15,500 against $26,100.');
    expect(verdict('desc', 'Pricier')).toBe('Honda CR-V is pricier: price $26,100 against $15,500.');
    // "which has more RAM": the word names the property, and the winner has it
    const laptop = (name: string, ram: number) => ({
      name,
      '@type': 'Product',
      schema_object: {
        '@type': 'Product',
        name,
        additionalProperty: [{ '@type': 'PropertyValue', name: 'RAM', value: ram, unitCode: 'E34' }],
      },
    });
    const path = 'additionalProperty.ram';
    const more = compareItems(
      laptop('Swift', 32),
      laptop('ZenBook', 64),
      'RAM',
      [path],
      [{ path, direction: 'desc', word: 'more RAM' }],
    );
    expect(more.verdict).toBe('ZenBook has more RAM: 64 GB against 32 GB.');
    // no word of the question's: which has the higher, with both values
    expect(compareItems(laptop('Swift', 32), laptop('ZenBook', 64), 'RAM', [path]).verdict).toBe(
      'ZenBook has the higher ram: 64 GB against 32 GB.',
    );
  });

  it('says neither wins when the items share no measure', () => {
    const cmp = compareItems(movie('Alien'), movie('Blade Runner'), 'mood', []);
    expect(cmp.verdict).toBe(
      'Neither clearly beats the other on mood; it depends on what you want from a movie.',
    );
  });
});
