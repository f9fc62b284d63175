import { describe, expect, it } from 'vitest';
import { sortByKeys } from './key-order';

/** What sortByKeys replaces: a comparator sort, ties in the order the items came. */
function bySort(items: Uint32Array, keys: Float64Array): number[] {
  return [...items]
    .map((item, at) => ({ item, at }))
    .sort((a, b) => keys[a.item]! - keys[b.item]! || a.at - b.at)
    .map((x) => x.item);
}

function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32;
}

describe('sortByKeys', () => {
  it('orders items as a comparator sort does, ties by arrival, over many kinds of numbers', () => {
    const rnd = random(7);
    for (const n of [0, 1, 2, 17, 1000, 20_000]) {
      const keys = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const r = rnd();
        keys[i] =
          r < 0.2
            ? Math.round(rnd() * 20) // many ties
            : r < 0.4
              ? -rnd() * 1e9
              : r < 0.5
                ? (rnd() - 0.5) * 1e-300
                : r < 0.55
                  ? [Infinity, -Infinity, 0, -0, Number.MAX_VALUE, -Number.MIN_VALUE][Math.floor(rnd() * 6)]!
                  : rnd() * 1e6;
      }
      // items in an arbitrary order, some left out
      const items = Uint32Array.from([...keys.keys()].filter(() => rnd() < 0.9).sort(() => rnd() - 0.5));
      expect([...sortByKeys(items, keys)]).toEqual(bySort(items, keys));
    }
  });

  it('treats -0 as 0 (ties by arrival), and puts NaN last', () => {
    const keys = Float64Array.from([0, -0, NaN, -1, 0]);
    expect([...sortByKeys(Uint32Array.from([0, 1, 2, 3, 4]), keys)]).toEqual([3, 0, 1, 4, 2]);
    expect([...sortByKeys(Uint32Array.from([4, 1, 0]), keys)]).toEqual([4, 1, 0]);
  });

  it('keeps equal keys in the order given', () => {
    const keys = new Float64Array(100).fill(5);
    const items = Uint32Array.from([...keys.keys()].reverse());
    expect([...sortByKeys(items, keys)]).toEqual([...items]);
  });
});
