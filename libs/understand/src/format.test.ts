import { describe, expect, it } from 'vitest';
import { formatRangeText, shownLabel } from './format';

describe('formatRangeText', () => {
  it('says a rating up to the top of its scale as "at least", under the name people use', () => {
    const rating = { unit: '/5', dimension: 'rating' as const, kind: 'number' as const };
    expect(formatRangeText('aggregate rating', rating, 4, 5, true, true)).toBe('rating at least 4/5');
    expect(formatRangeText('aggregate rating', rating, 3, 4, true, true)).toBe('rating 3/5–4/5');
    expect(shownLabel('review rating')).toBe('rating');
    expect(shownLabel('star rating')).toBe('star rating');
  });

  it('says a number that is a year as a year', () => {
    const vintage = { kind: 'number' as const, integer: true, min: 1985, max: 2022 };
    expect(formatRangeText('vintage', vintage, undefined, 1995, true, false)).toBe('vintage before 1995');
    expect(formatRangeText('vintage', vintage, 2018, undefined, true, true)).toBe('vintage since 2018');
    // a count in the same range is no year: it has a dimension of its own
    expect(formatRangeText('pages', { dimension: 'count' as const }, 1200, undefined, false, true)).toBe(
      'pages over 1,200',
    );
  });
});
