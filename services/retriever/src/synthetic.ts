import type { StoredItem } from '@askbus/contracts';
import { loadDemoSites } from '@askbus/demo-data';

/**
 * N items made from the demo sites for measuring the store at sizes the demo data does not
 * reach: copy k of a demo item gets a distinct name (a made-up word added), its own URL, its
 * years moved and its numbers changed a little, so no two items are the same and the keyword,
 * vector and structured indexes see realistic spreads.
 */
const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ren',
  'sa',
  'tor',
  'vel',
  'qu',
  'zan',
  'dro',
  'pex',
  'ul',
  'bri',
  'gon',
];

/**
 * A small deterministic generator (mulberry32): numbers in [0, 1), the same for a seed on every
 * run, so benchmarks and tests see the same data each time.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A pronounceable word for a number, distinct per number. */
export function syntheticWord(n: number): string {
  let word = '';
  let rest = n;
  do {
    word += SYLLABLES[rest % SYLLABLES.length];
    rest = Math.floor(rest / SYLLABLES.length);
  } while (rest > 0);
  return word.charAt(0).toUpperCase() + word.slice(1);
}

function hash(n: number): number {
  let h = Math.imul(n ^ 0x9e3779b9, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function vary(value: unknown, seed: number, yearShift: number): unknown {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value === 0) return value;
    const factor = 1 + ((hash(seed) % 21) - 10) / 100;
    const decimals = Number.isInteger(value) ? 0 : 1;
    return Number((value * factor).toFixed(decimals));
  }
  if (typeof value === 'string') {
    const m = /^(\d{4})(-\d\d-\d\d.*)?$/.exec(value);
    return m ? `${Number(m[1]) + yearShift}${m[2] ?? ''}` : value;
  }
  if (Array.isArray(value)) return value.map((v, i) => vary(v, seed * 31 + i, yearShift));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    let i = 0;
    for (const [k, v] of Object.entries(value)) {
      out[k] = k === 'url' || k === '@id' ? v : vary(v, seed * 17 + i++, yearShift);
    }
    return out;
  }
  return value;
}

/** `n` distinct items over the demo sites (movies and cars, in their proportions). */
export function syntheticItems(n: number): StoredItem[] {
  const demo = loadDemoSites().flatMap((s) => s.items);
  const out: StoredItem[] = [];
  for (let i = 0; i < n; i++) {
    // a stride prime to the count visits every demo item once a round, sites mixed
    const base = demo[(i * 7919) % demo.length]!;
    const copy = Math.floor(i / demo.length);
    if (copy === 0) {
      out.push(base);
      continue;
    }
    const name = `${base.name} ${syntheticWord(copy)}`;
    const url = `${base.url}-${copy}`;
    const yearShift = (hash(i) % 21) - 10;
    const schema = vary(base.schema_object, i, yearShift) as Record<string, unknown>;
    out.push({ ...base, name, url, schema_object: { ...schema, name, url } });
  }
  return out;
}
