import type { StoredItem } from '@askbus/contracts';
import { loadDemoSites } from '@askbus/demo-data';
import { seededRandom } from '@askbus/retriever';

const SEQUELS = ['Returns', 'Reloaded', 'Rising', 'Origins', 'Legacy', 'Redux', 'Revisited', 'Forever'];
const TRIMS = ['Sport', 'Deluxe', 'Touring', 'Custom', 'Limited', 'Classic', 'Special', 'Brougham'];
/** Numbers left as they are: counts of parts and bounded scales (cylinders, a rating out of 10). */
const KEEP = new Set(['bestRating', 'worstRating']);

/** Every number of 20 or more scaled by `factor` (integers stay integers); years moved by `years`. */
function vary(value: unknown, key: string, factor: number, years: number): unknown {
  if (typeof value === 'number') {
    if (KEEP.has(key) || Math.abs(value) < 20) return value;
    const v = value * factor;
    return Number.isInteger(value) ? Math.round(v) : Math.round(v * 10) / 10;
  }
  if (typeof value === 'string') {
    if (key === 'url' || key === '@type' || key === '@context') return value;
    // a year standing alone or leading a date: 1998, 1998-06-12
    return value.replace(/\b(19[2-9]\d|20[0-2]\d)\b/g, (y) => String(Number(y) + years));
  }
  if (Array.isArray(value)) return value.map((v) => vary(v, key, factor, years));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, vary(v, k, factor, years)]),
    );
  }
  return value;
}

/**
 * `count` items made from the demo sites (3,200 movies, 406 cars, in that proportion): copy 0 of
 * each is the original, copy k a sequel ("Pale Rider Returns 3") or trim ("Ford Pinto Sport 3")
 * with its own URL, its years moved by up to ±8 (±5 for cars) and its larger numbers (budgets,
 * grosses, votes, weights, power) scaled by 0.7–1.3: distinct names, years and numbers, so
 * constraints and superlatives have work to do at every size.
 */
export function syntheticItems(count: number): Map<string, StoredItem[]> {
  const out = new Map<string, StoredItem[]>();
  for (const item of synthetic(count)) {
    const list = out.get(item.site) ?? [];
    list.push(item);
    out.set(item.site, list);
  }
  return out;
}

/**
 * The same items as `syntheticItems`, in batches as `askbus load` sends them: one site after the
 * other, each batch at most `maxBytes` of JSON (the loader's limit), made as they are asked for,
 * so a load's memory is the store's, not the whole synthetic site held by the bench.
 */
export function* syntheticBatches(
  count: number,
  maxBytes: number,
): Generator<{ site: string; items: StoredItem[] }> {
  // a site at a time, as one `askbus load` per site loads them (the items made again for each)
  for (const site of SITES) {
    let batch: StoredItem[] = [];
    let bytes = 0;
    for (const item of synthetic(count)) {
      if (item.site !== site) continue;
      const size = JSON.stringify(item).length;
      if (batch.length && bytes + size > maxBytes) {
        yield { site, items: batch };
        [batch, bytes] = [[], 0];
      }
      batch.push(item);
      bytes += size;
    }
    if (batch.length) yield { site, items: batch };
  }
}

/** The demo sites the synthetic items are made from, in the order a load sends them. */
const SITES: readonly string[] = ['movies', 'cars'];

function* synthetic(count: number): Generator<StoredItem> {
  const demo = loadDemoSites().filter((s) => SITES.includes(s.site));
  const rnd = seededRandom(22);
  // shuffled (seeded), so any prefix has both sites in their proportion
  const base = demo.flatMap((s) => s.items);
  for (let i = base.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [base[i], base[j]] = [base[j]!, base[i]!];
  }
  for (let n = 0; n < count; n++) {
    const item = base[n % base.length]!;
    const copy = Math.floor(n / base.length);
    if (copy === 0) {
      yield item;
      continue;
    }
    const isCar = item.site === 'cars';
    const words = isCar ? TRIMS : SEQUELS;
    const name = `${item.name} ${words[copy % words.length]!} ${Math.ceil(copy / words.length) + 1}`;
    const years = Math.round((rnd() * 2 - 1) * (isCar ? 5 : 8));
    const factor = 0.7 + rnd() * 0.6;
    const url = `${item.url}/v${copy}`;
    const schema = vary(item.schema_object, '', factor, years) as Record<string, unknown>;
    yield { ...item, url, name, schema_object: { ...schema, url, name } };
  }
}
