import { describe, expect, it } from 'vitest';
import type { StoredItem } from '@askbus/contracts';
import { comparisonTable } from './index';

const item = (name: string, schema: Record<string, unknown>): StoredItem => ({
  url: `https://shop.example/${name}`,
  name,
  site: 'shop',
  '@type': 'Product',
  schema_object: { '@context': 'https://schema.org', '@type': 'Product', name, ...schema },
});

describe('comparisonTable', () => {
  it('lines the two items up by property in words, named values by name, units and currencies shown', () => {
    const a = item('A', {
      weight: { '@type': 'QuantitativeValue', value: 2.07, unitCode: 'KGM' },
      offers: {
        '@type': 'Offer',
        price: 849,
        priceCurrency: 'USD',
        availability: 'https://schema.org/InStock',
      },
      aggregateRating: { '@type': 'AggregateRating', ratingValue: 3.7 },
      additionalProperty: [
        { '@type': 'PropertyValue', name: 'RAM', value: 32, unitCode: 'E34' },
        { '@type': 'PropertyValue', name: 'screen size', value: 15.6, unitCode: 'INH' },
      ],
    });
    const b = item('B', {
      additionalProperty: [
        { '@type': 'PropertyValue', name: 'screen size', value: 13.3, unitCode: 'INH' },
        { '@type': 'PropertyValue', name: 'ram', value: 16, unitCode: 'E34' },
      ],
      weight: { '@type': 'QuantitativeValue', value: 2.43, unitCode: 'KGM' },
      offers: {
        '@type': 'Offer',
        price: 2949,
        priceCurrency: 'USD',
        availability: 'https://schema.org/OutOfStock',
      },
      color: 'black',
    });
    expect(comparisonTable(a, b)).toEqual([
      { field: 'weight', item1: '2.07 kg', item2: '2.43 kg' },
      { field: 'price', item1: '$849', item2: '$2,949' },
      { field: 'availability', item1: 'In Stock', item2: 'Out Of Stock' },
      { field: 'rating', item1: '3.7/5', item2: '' },
      { field: 'RAM', item1: '32 GB', item2: '16 GB' },
      { field: 'screen size', item1: '15.6 in', item2: '13.3 in' },
      { field: 'color', item1: '', item2: 'black' },
    ]);
  });
});
