import { describe, expect, it } from 'vitest';
import type { StoredItem } from '@askbus/contracts';
import { DocSet } from '@askbus/search-core';
import { ColumnSelection, type SelectionSource } from './index-store';
import { seededRandom } from './synthetic';
import { UrlOrder } from './url-order';

/** URLs that share long prefixes and differ anywhere after them, some equal but for a suffix. */
function randomUrls(n: number, seed: number): string[] {
  const rnd = seededRandom(seed);
  const word = (): string => Math.floor(rnd() * 1e6).toString(36);
  const sites = ['https://a.example/movie/', 'https://b.example/car/', 'https://a.example/m/'];
  return Array.from(
    { length: n },
    (_, i) => `${sites[i % 3]}${word()}${rnd() < 0.3 ? `/v${i % 7}` : ''}-${i}`,
  );
}

/** The reference: every URL `take` accepts, sorted, the first n. */
function firstSorted(
  urls: readonly string[],
  n: number,
  take: (doc: number, url: string) => boolean,
): string[] {
  return urls
    .flatMap((url, doc) => (url && take(doc, url) ? [url] : []))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, n);
}

describe('UrlOrder', () => {
  it('walks the documents a test accepts in URL order, as sorting them all would', () => {
    const urls = randomUrls(5_000, 1);
    const order = new UrlOrder(() => urls);
    expect(order.ready).toBe(false);
    const rnd = seededRandom(2);
    const kept = new Set(urls.filter(() => rnd() < 0.4));
    const all = { has: () => true };
    for (const n of [0, 1, 10, 200, 5_000]) {
      const take = (url: string) => kept.has(url);
      expect(order.first(n, all, take)).toEqual(firstSorted(urls, n, (_, url) => take(url)));
    }
    // a walk that would look at more documents than it may gives up
    const some = { has: (doc: number) => doc % 2 === 0 };
    const every = () => true;
    expect(order.first(100, some, every, 150)).toBeUndefined();
    expect(order.first(100, some, every, 5_000)).toEqual(firstSorted(urls, 100, (doc) => doc % 2 === 0));
    expect(order.ready).toBe(true);
  });

  it('merges documents added after its sort, skips removed ones, and sorts again once the new ones are many', () => {
    const made = randomUrls(30_000, 3);
    const urls = made.slice(0, 20_000);
    const order = new UrlOrder(() => urls);
    const every = () => true;
    const all = { has: every };
    expect(order.first(50, all, every)).toEqual(firstSorted(urls, 50, every));
    // a few added (merged in from their own sort) and a few removed (their URL is '')
    urls.push(...made.slice(20_000, 21_000));
    const gone = new Set<number>();
    for (let doc = 0; doc < urls.length; doc += 97) {
      urls[doc] = '';
      gone.add(doc);
    }
    expect(order.ready).toBe(true);
    const some = (doc: number) => doc % 3 !== 0;
    expect(order.first(300, { has: some }, every)).toEqual(firstSorted(urls, 300, some));
    expect(order.first(urls.length, all, every)).toEqual(firstSorted(urls, urls.length, every));
    // many added: past the share a merge is kept for, the next walk sorts them all again
    urls.push(...made.slice(21_000));
    expect(order.ready).toBe(false);
    expect(order.first(1_000, { has: some }, every)).toEqual(firstSorted(urls, 1_000, some));
    expect(order.ready).toBe(true);
  });

  it('starts over when the store replaces its URL array', () => {
    let urls = randomUrls(1_000, 4);
    const order = new UrlOrder(() => urls);
    const every = () => true;
    expect(order.first(10, { has: every }, every)).toEqual(firstSorted(urls, 10, every));
    urls = randomUrls(800, 5);
    expect(order.ready).toBe(false);
    expect(order.first(10, { has: every }, every)).toEqual(firstSorted(urls, 10, every));
  });
});

describe('ColumnSelection.firstByUrl', () => {
  it('finds the first URLs of a large set by walking the URL order, as the scan of the set does', () => {
    const urls = randomUrls(60_000, 6);
    const src: SelectionSource = {
      item: (doc) => ({ url: urls[doc]! }) as StoredItem,
      url: (doc) => urls[doc] ?? '',
      doc: (url) => urls.indexOf(url),
      column: () => {
        throw new Error('not used');
      },
      sorted: () => {
        throw new Error('not used');
      },
      byUrl: new UrlOrder(() => urls),
    };
    const rnd = seededRandom(7);
    for (const share of [0.9, 0.5, 0.05, 0.001]) {
      const docs = new DocSet(urls.length);
      for (let doc = 0; doc < urls.length; doc++) if (rnd() < share) docs.add(doc);
      const selection = new ColumnSelection(src, docs);
      const inSet = [...docs.toArray()].map((d) => urls[d]!);
      const skip = new Set(inSet.filter(() => rnd() < 0.2).slice(0, 40));
      for (const n of [1, 20, 150]) {
        const want = firstSorted(urls, n, (doc, url) => docs.has(doc) && !skip.has(url));
        expect(selection.firstByUrl(n, skip)).toEqual(want);
      }
    }
    // the large sets were walked (the order was sorted for them)
    expect(src.byUrl.ready).toBe(true);
  });
});
