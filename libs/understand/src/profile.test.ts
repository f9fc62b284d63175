import { describe, expect, it } from 'vitest';
import type { StoredItem } from '@askbus/contracts';
import { loadDemoSites } from '@askbus/demo-data';
import { SiteCatalog } from './catalog';
import { compactFacts, extractFacts, factsByPath } from './facts';
import { factPhrase } from './describe';
import { quantilesOf, quantilesOfCounted } from './evaluate';
import { contributionOf, ProfileBuilder, type ItemContribution, type ProfileSnapshot } from './profile';

const movies = loadDemoSites().find((s) => s.site === 'movies')!.items;
const contribution = (item: StoredItem) => contributionOf(item['@type'], extractFacts(item.schema_object));
/** A snapshot as the index file holds it: through JSON. */
const throughJson = (s: ProfileSnapshot): ProfileSnapshot => JSON.parse(JSON.stringify(s)) as ProfileSnapshot;
/** The profile without its version (a restored builder counts changes on from the saved count). */
const counts = (b: ProfileBuilder) => ({ ...b.profile(), version: '' });
/** A catalog's movies profile without its version (the epoch differs between catalogs). */
const catalogCounts = (c: SiteCatalog) => ({ ...c.profile('movies')!, version: '' });

describe('ProfileBuilder.snapshot / restore', () => {
  const some = movies.slice(0, 400);
  const built = (): ProfileBuilder => {
    const b = new ProfileBuilder('movies');
    for (const item of some) b.add(contribution(item));
    // a value spelled two ways: one folded value, the first spelling kept
    b.add(contribution({ ...some[0]!, name: some[0]!.name.toUpperCase() }));
    return b;
  };

  it('reads back the same profile, and the same snapshot', () => {
    const live = built();
    const restored = ProfileBuilder.restore(throughJson(live.snapshot()));
    expect(counts(restored)).toEqual(counts(live));
    expect(restored.snapshot()).toEqual(live.snapshot());
  });

  it('keeps the profile computed when saved, while it is of the counts restored', () => {
    const live = built();
    const saved = throughJson(live.snapshot());
    expect(saved.profile).toEqual(live.profile());
    // the saved profile is used as it is: no quantiles are computed again after a restart
    const marked = { ...saved, profile: { ...saved.profile!, siteWords: ['marked'] } };
    expect(ProfileBuilder.restore(marked).profile().siteWords).toEqual(['marked']);
    // not when it is of other counts, nor when it is not a profile: then computed from the counts
    const stale = { ...marked, profile: { ...marked.profile, version: 'other' } };
    expect(ProfileBuilder.restore(stale).profile()).toEqual(live.profile());
    const broken = { ...saved, profile: { site: 'movies' } as unknown as ProfileSnapshot['profile'] };
    expect(ProfileBuilder.restore(broken).profile()).toEqual(live.profile());
    const older = throughJson(live.snapshot(false));
    expect(older.profile).toBeUndefined();
    expect(ProfileBuilder.restore(older).profile()).toEqual(live.profile());
  });

  it('adds and removes after a restore as the builder it was saved from does', () => {
    const live = built();
    const restored = ProfileBuilder.restore(throughJson(live.snapshot()));
    const changes: Array<[StoredItem, 1 | -1]> = [
      [some[0]!, -1],
      [some[1]!, -1],
      [{ ...some[2]!, name: 'Zyxwv' }, 1],
      [movies[500]!, 1],
      [some[3]!, -1],
    ];
    for (const [item, sign] of changes)
      for (const b of [live, restored]) {
        if (sign > 0) b.add(contribution(item));
        else b.remove(contribution(item));
      }
    expect(counts(restored)).toEqual(counts(live));
    const name = (b: ProfileBuilder) => b.profile().properties.find((p) => p.path === 'name');
    expect(name(restored)).toEqual(name(live));
    expect(restored.snapshot()).toEqual(live.snapshot());
  });

  it('throws on damaged counts', () => {
    const saved = built().snapshot();
    const [path, stats] = saved.paths.find(([, s]) => s.strs.counts.length > 0)!;
    const damaged: ProfileSnapshot[] = [
      { ...saved, paths: [[path, { ...stats, strs: { ...stats.strs, text: `${stats.strs.text}x` } }]] },
      { ...saved, paths: [[path, { ...stats, strs: { ...stats.strs, counts: [] } }]] },
      {
        ...saved,
        paths: [[path, { ...stats, strs: { ...stats.strs, lengths: stats.strs.lengths.map(() => -1) } }]],
      },
      { ...saved, paths: [[path, { ...stats, nums: [1] }]] },
    ];
    for (const s of damaged) expect(() => ProfileBuilder.restore(s)).toThrow(/damaged/);
  });
});

describe('SiteCatalog.snapshot / restore', () => {
  it('reads back the profiles and the names', () => {
    const live = new SiteCatalog(false);
    for (const item of movies.slice(0, 300)) live.add(item);
    const urls = movies.slice(0, 300).map((m) => m.url);
    const saved = live.snapshot((url) => urls.indexOf(url));
    const restored = new SiteCatalog(false);
    restored.restore({ profiles: saved.profiles.map(throughJson), names: saved.names }, (n) => urls[n]);
    expect(restored.siteNames).toEqual(live.siteNames);
    expect({ ...restored.profile('movies')!, version: '' }).toEqual({
      ...live.profile('movies')!,
      version: '',
    });
    const q = `is ${movies[7]!.name} like ${movies[8]!.name}`;
    expect(restored.names.find(q)).toEqual(live.names.find(q));
    expect(restored.names.find(q).length).toBeGreaterThan(0);
  });
});

describe('SiteCatalog.settle', () => {
  const first = movies.slice(0, 300);
  const later = movies.slice(300, 340);
  const catalogOf = (items: StoredItem[]): SiteCatalog => {
    const c = new SiteCatalog(false);
    for (const item of items) c.add(item);
    return c;
  };

  it('holds the counts as saved, with the same profile and version, and counts on as before', () => {
    const live = catalogOf(first);
    const settled = catalogOf(first);
    const before = settled.profile('movies')!;
    settled.settle(settled.snapshot(() => undefined).profiles);
    expect(settled.profile('movies')).toEqual(before);
    expect(settled.version('movies')).toBe(settled.profile('movies')!.version);
    expect(settled.snapshot(() => undefined).profiles).toEqual(live.snapshot(() => undefined).profiles);
    // the same changes after: the same counts, the same snapshot
    for (const item of later) {
      live.add(item);
      settled.add(item);
    }
    for (const item of first.slice(0, 25)) {
      live.remove(item);
      settled.remove(item);
    }
    expect(catalogCounts(settled)).toEqual(catalogCounts(live));
    expect(settled.snapshot(() => undefined).profiles).toEqual(live.snapshot(() => undefined).profiles);
  });

  it('leaves a site changed since the snapshot as it is', () => {
    const catalog = catalogOf(first);
    const old = catalog.snapshot(() => undefined).profiles;
    catalog.add(later[0]!);
    const now = catalog.profile('movies')!;
    catalog.settle(old);
    expect(catalog.profile('movies')).toEqual(now);
    expect(now.itemCount).toBe(first.length + 1);
  });
});

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
const reopened = (b: ProfileBuilder): ProfileBuilder => ProfileBuilder.restore(throughJson(b.snapshot()));

describe('ProfileBuilder snapshot and restore on a site of books', () => {
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

describe('quantilesOfCounted', () => {
  it('gives the quantiles of the list with every occurrence written out', () => {
    let seed = 3;
    const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    for (const m of [1, 2, 5, 40, 700]) {
      const sorted = [...new Set(Array.from({ length: m }, () => Math.round(rnd() * 1e4) / 10))].sort(
        (a, b) => a - b,
      );
      const counts = sorted.map(() => 1 + Math.floor(rnd() * (rnd() < 0.1 ? 50 : 3)));
      const listed = sorted.flatMap((v, i) => Array<number>(counts[i]!).fill(v));
      expect(quantilesOfCounted(sorted, counts)).toEqual(quantilesOf(listed));
    }
    expect(quantilesOfCounted([], [])).toBeUndefined();
  });
});

describe('properties named like those of every object', () => {
  it('keeps "constructor" and "toString" as properties of the data', () => {
    const facts = extractFacts({ '@type': 'Thing', constructor: 'Ferrari', toString: 'x', wins: 3 });
    expect(JSON.parse(JSON.stringify(compactFacts(facts)))).toEqual({
      constructor: ['Ferrari'],
      toString: ['x'],
      wins: [3],
    });
    const byPath = factsByPath(facts);
    expect(factPhrase('constructor', byPath.get('constructor')!)).toBe('constructor Ferrari');
    expect(factPhrase('toString', byPath.get('toString')!)).toBe('to string x');
  });
});
