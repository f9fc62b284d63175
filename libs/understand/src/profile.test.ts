import { describe, expect, it } from 'vitest';
import { extractFacts } from './facts';
import { contributionOf, ProfileBuilder, type ItemContribution } from './profile';

/** Books of a site no demo has: pages, a rating, a publication date, an author and a language. */
function book(n: number): ItemContribution {
  return contributionOf(
    'Book',
    extractFacts({
      '@type': 'Book',
      name: `Book number ${n}`,
      numberOfPages: 100 + ((n * 37) % 400),
      datePublished: `${1950 + (n % 70)}-0${1 + (n % 9)}-15`,
      inLanguage: ['English', 'French', 'German'][n % 3],
      author: { '@type': 'Person', name: `Author ${n % 11}` },
      aggregateRating: { '@type': 'AggregateRating', ratingValue: (n % 50) / 10 },
    }),
  );
}

/** A snapshot as the index file holds it: through JSON and back. */
const reopened = (b: ProfileBuilder): ProfileBuilder =>
  ProfileBuilder.restore(JSON.parse(JSON.stringify(b.snapshot())) as ReturnType<ProfileBuilder['snapshot']>);

describe('ProfileBuilder snapshot and restore (packed counts)', () => {
  const items = Array.from({ length: 60 }, (_, n) => book(n));

  it('gives the same profile and snapshot after a restore, before any change', () => {
    const built = new ProfileBuilder('books');
    for (const c of items) built.add(c);
    const restored = reopened(built);
    expect(restored.profile()).toEqual(built.profile());
    expect(restored.snapshot()).toEqual(built.snapshot());
    expect(restored.profile().properties.find((p) => p.path === 'numberOfPages')).toMatchObject({
      kind: 'number',
      count: 60,
    });
  });

  it('keeps counting after a restore as the built profile does (adds, removes, values that vanish)', () => {
    const built = new ProfileBuilder('books');
    for (const c of items.slice(0, 40)) built.add(c);
    const restored = reopened(built);
    for (const b of [built, restored]) {
      for (const c of items.slice(40)) b.add(c);
      // every French book goes: the value leaves the enumeration, its numbers leave the quantiles
      items.forEach((c, n) => n % 3 === 1 && b.remove(c));
    }
    expect(restored.profile()).toEqual(built.profile());
    const language = restored.profile().properties.find((p) => p.path === 'inLanguage');
    expect(language?.kind === 'enum' && (language.values ?? []).map((v) => v.value).sort()).toEqual([
      'English',
      'German',
    ]);
    expect(restored.snapshot()).toEqual(built.snapshot());
  });

  it('empties when every item is removed after a restore', () => {
    const built = new ProfileBuilder('books');
    for (const c of items) built.add(c);
    const restored = reopened(built);
    for (const c of items) restored.remove(c);
    expect(restored.size).toBe(0);
    expect(restored.profile().properties).toEqual([]);
    expect(restored.profile().types).toEqual([]);
  });
});
