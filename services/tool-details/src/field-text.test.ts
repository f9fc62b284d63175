import { describe, expect, it } from 'vitest';
import { fieldText } from './index';

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
      '90000 USD per year',
    );
    expect(fieldText({ value: 2217, unitCode: 'FTK' })).toBe('2217 sq ft');
  });

  it('shows a schema.org enumeration member by its name, other links as written', () => {
    expect(fieldText('https://schema.org/InStock')).toBe('In Stock');
    expect(fieldText(['https://schema.org/Hardcover', 'https://example.com/x'])).toBe(
      'Hardcover, https://example.com/x',
    );
  });
});
