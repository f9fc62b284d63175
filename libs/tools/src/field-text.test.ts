import { describe, expect, it } from 'vitest';
import { fieldRows, fieldText, moneyText } from './field-text';

describe('fieldText', () => {
  it('shows a rating on its own scale, schema.org’s 1-5 when it names none', () => {
    expect(fieldText({ '@type': 'AggregateRating', ratingValue: 4.2 })).toBe('4.2/5');
    expect(fieldText({ ratingValue: 7.9, bestRating: 10, ratingCount: 1200 })).toBe('7.9/10 (1200 votes)');
  });

  it('shows a quantity in the unit people write, a UN/CEFACT code read as its unit', () => {
    expect(fieldText({ '@type': 'QuantitativeValue', value: 2.17, unitCode: 'KGM' })).toBe('2.17 kg');
    expect(fieldText({ value: 150, unitText: 'mm' })).toBe('150 mm');
    expect(fieldText({ value: 3, unitCode: 'XYZ' })).toBe('3 XYZ');
    // a MonetaryAmount of a QuantitativeValue: the amount in its currency, per its period
    expect(fieldText({ currency: 'USD', value: { value: 90_000, unitText: 'YEAR' } })).toBe(
      '$90,000 per year',
    );
    expect(fieldText({ value: 2217, unitCode: 'FTK' })).toBe('2217 sq ft');
  });

  it('shows a schema.org enumeration member by its name, other links as written', () => {
    expect(fieldText('https://schema.org/InStock')).toBe('In Stock');
    expect(fieldText(['https://schema.org/Hardcover', 'https://example.com/x'])).toBe(
      'Hardcover, https://example.com/x',
    );
  });

  it('shows an Offer as its price in its currency and its availability', () => {
    expect(
      fieldText({
        '@type': 'Offer',
        price: 849,
        priceCurrency: 'USD',
        availability: 'https://schema.org/InStock',
      }),
    ).toBe('$849, In Stock');
    expect(fieldText({ price: '12.5', priceCurrency: 'EUR' })).toBe('€12.50');
    expect(moneyText(300, 'points')).toBe('300 points');
    expect(moneyText(1_250_000, undefined)).toBe('1,250,000');
  });
});

describe('fieldRows', () => {
  const laptop = {
    '@type': 'Product',
    name: 'XPS 16',
    releaseDate: '2024-06-15',
    weight: { '@type': 'QuantitativeValue', value: 2.07, unitCode: 'KGM' },
    offers: {
      '@type': 'Offer',
      price: 849,
      priceCurrency: 'USD',
      availability: 'https://schema.org/InStock',
    },
    aggregateRating: { '@type': 'AggregateRating', ratingValue: 3.7, reviewCount: 26 },
    additionalProperty: [
      { '@type': 'PropertyValue', name: 'RAM', value: 32, unitCode: 'E34' },
      { '@type': 'PropertyValue', name: 'battery life', value: 19, unitText: 'hours' },
    ],
  };

  it('names each row in words, a named value by its own name, an offer as price and availability', () => {
    expect(fieldRows(laptop, new Set(['name'])).map((r) => [r.field, r.text])).toEqual([
      ['release date', '2024-06-15'],
      ['weight', '2.07 kg'],
      ['price', '$849'],
      ['availability', 'In Stock'],
      ['rating', '3.7/5 (26 reviews)'],
      ['RAM', '32 GB'],
      ['battery life', '19 hours'],
    ]);
  });
});
