import {
  SiteProfile as SiteProfileSchema,
  type PropertyKind,
  type PropertyProfile,
  type SiteProfile,
} from '@askbus/contracts';
import { sortByKeys, STOPWORDS, tokenize } from '@askbus/search-core';
import { quantilesOfCounted } from './evaluate';
import type { Fact } from './facts';
import type { Dimension } from './units';

/**
 * A site's profile, kept as counts so items can be added and removed one at a time (upserts
 * replace, deletes remove) and the profile read at any moment: for each property path its
 * kind, unit, range and quantiles, or its values with counts; the site's types by count; the
 * words so common in its items that they describe the site itself.
 */

/** Types that are a page's furniture, not what a site is about (NLWeb skips them too). */
const FURNITURE_TYPES = new Set([
  'WebSite',
  'WebPage',
  'Organization',
  'BreadcrumbList',
  'ListItem',
  'SiteNavigationElement',
  'SearchAction',
  'ImageObject',
  'WPHeader',
  'WPFooter',
  'WPSideBar',
  'ItemList',
  'Person',
  'Corporation',
  'ReadAction',
]);
/** Values kept per property in a profile (the most common). */
const MAX_VALUES = 5_000;
/** A word in at least this share of a site's items describes the site. */
const SITE_WORD_SHARE = 0.6;
const MIN_ITEMS_FOR_SITE_WORDS = 5;

/** What one item contributes, computed once so removing it undoes exactly what adding did. */
export interface ItemContribution {
  type: string;
  paths: Map<string, PathPart>;
  /** Distinct words of the item's name and values (for site words). */
  words: Set<string>;
}

interface PathPart {
  label: string;
  context: string;
  kinds: Partial<Record<Fact['kind'], number>>;
  unit?: string;
  srcUnit?: string;
  dimension?: Dimension;
  nums: number[];
  strs: string[];
}

/** What an item adds to its site's profile. */
export function contributionOf(type: string, facts: readonly Fact[]): ItemContribution {
  const paths = new Map<string, PathPart>();
  const words = new Set<string>();
  for (const f of facts) {
    let p = paths.get(f.path);
    if (!p) paths.set(f.path, (p = { label: f.label, context: f.context, kinds: {}, nums: [], strs: [] }));
    p.kinds[f.kind] = (p.kinds[f.kind] ?? 0) + 1;
    if (f.unit && !p.unit) {
      p.unit = f.unit;
      if (f.srcUnit) p.srcUnit = f.srcUnit;
      if (f.dimension) p.dimension = f.dimension;
    } else if (f.dimension && !p.dimension) p.dimension = f.dimension;
    if (f.num !== undefined) p.nums.push(f.num);
    if (f.str !== undefined && (f.kind === 'string' || f.kind === 'name')) p.strs.push(f.str);
    if (f.str !== undefined && f.kind !== 'date')
      for (const t of tokenize(f.str)) if (t.length > 2 && !STOPWORDS.has(t)) words.add(t);
  }
  return { type, paths, words };
}

class PathStats {
  items = 0;
  label = '';
  context = '';
  readonly kinds = new Map<Fact['kind'], number>();
  readonly units = new Map<string, number>();
  readonly srcUnits = new Map<string, number>();
  readonly dimensions = new Map<string, number>();
  /** number → count; undefined while the restored counts are still `packedNums` (made a map when first changed). */
  private numMap: Map<number, number> | undefined = new Map();
  /** Restored counts as they were saved, value and count after each other: no map of 100k+ entries until one changes. */
  private packedNums: Float64Array | undefined;
  /** folded value → [count, the spelling first seen]; undefined while still `packedStrs`. */
  private strMap: Map<string, [number, string]> | undefined = new Map();
  /**
   * Restored values as they were saved: each first spelling (its folded value is its lowercase)
   * as one text and where each ends, and its count; no map nor string per value until one
   * changes (a site's names are 300k values, kept only to count them).
   */
  private packedStrs: { text: string; ends: Uint32Array; counts: Float64Array } | undefined;

  get nums(): Map<number, number> {
    if (!this.numMap) {
      const p = this.packedNums!;
      const map = new Map<number, number>();
      for (let i = 0; i < p.length; i += 2) map.set(p[i]!, p[i + 1]!);
      this.numMap = map;
      this.packedNums = undefined;
    }
    return this.numMap;
  }

  get strs(): Map<string, [number, string]> {
    if (!this.strMap) {
      this.strMap = new Map(this.strEntries());
      this.packedStrs = undefined;
    }
    return this.strMap;
  }

  /** Each number with its count (read without making the map). */
  *numEntries(): IterableIterator<[number, number]> {
    const p = this.packedNums;
    if (!p) yield* this.numMap!;
    else for (let i = 0; i < p.length; i += 2) yield [p[i]!, p[i + 1]!];
  }

  /** Each folded value with its count and first spelling (read without making the map). */
  *strEntries(): IterableIterator<[string, [number, string]]> {
    const p = this.packedStrs;
    if (!p) {
      yield* this.strMap!;
      return;
    }
    let start = 0;
    for (let i = 0; i < p.ends.length; i++) {
      const spelling = p.text.slice(start, p.ends[i]);
      start = p.ends[i]!;
      yield [spelling.toLowerCase(), [p.counts[i]!, spelling]];
    }
  }

  get distinctNums(): number {
    return this.packedNums ? this.packedNums.length / 2 : this.numMap!.size;
  }

  get distinctStrs(): number {
    return this.packedStrs ? this.packedStrs.ends.length : this.strMap!.size;
  }

  /** The counts as plain data (`restore` reads them back). */
  snapshot(): PathStatsSnapshot {
    const nums: number[] = [];
    for (const [v, n] of this.numEntries()) nums.push(v, n);
    const spellings: string[] = [];
    const lengths: number[] = [];
    const counts: number[] = [];
    for (const [, [n, spelling]] of this.strEntries()) {
      spellings.push(spelling);
      lengths.push(spelling.length);
      counts.push(n);
    }
    return {
      items: this.items,
      label: this.label,
      context: this.context,
      kinds: [...this.kinds],
      units: [...this.units],
      srcUnits: [...this.srcUnits],
      dimensions: [...this.dimensions],
      nums,
      strs: { text: spellings.join(''), lengths, counts },
    };
  }

  /** Counts `snapshot` gave; throws on counts that are not such (a damaged file). */
  static restore(s: PathStatsSnapshot): PathStats {
    const out = new PathStats();
    out.items = s.items;
    out.label = s.label;
    out.context = s.context;
    for (const [k, n] of s.kinds) out.kinds.set(k, n);
    for (const [k, n] of s.units) out.units.set(k, n);
    for (const [k, n] of s.srcUnits) out.srcUnits.set(k, n);
    for (const [k, n] of s.dimensions) out.dimensions.set(k, n);
    const { text, lengths, counts } = s.strs;
    if (
      !Array.isArray(s.nums) ||
      s.nums.length % 2 !== 0 ||
      typeof text !== 'string' ||
      !Array.isArray(lengths) ||
      !Array.isArray(counts) ||
      lengths.length !== counts.length
    )
      throw new Error('damaged path counts');
    out.numMap = undefined;
    out.packedNums = Float64Array.from(s.nums);
    const ends = new Uint32Array(lengths.length);
    let end = 0;
    lengths.forEach((n, i) => {
      if (!Number.isInteger(n) || n < 0) throw new Error('damaged path counts');
      ends[i] = end += n;
    });
    if (end !== text.length) throw new Error('damaged path counts');
    out.strMap = undefined;
    out.packedStrs = { text, ends, counts: Float64Array.from(counts) };
    return out;
  }

  apply(part: PathPart, sign: 1 | -1): void {
    this.items += sign;
    if (sign > 0 || !this.label) {
      this.label = part.label;
      this.context = part.context;
    }
    for (const [k, n] of Object.entries(part.kinds)) bump(this.kinds, k as Fact['kind'], sign * n);
    if (part.unit) bump(this.units, part.unit, sign);
    if (part.srcUnit) bump(this.srcUnits, part.srcUnit, sign);
    if (part.dimension) bump(this.dimensions, part.dimension, sign);
    for (const n of part.nums) bump(this.nums, n, sign);
    for (const s of part.strs) {
      const key = s.toLowerCase();
      const have = this.strs.get(key);
      const next = (have?.[0] ?? 0) + sign;
      if (next <= 0) this.strs.delete(key);
      else this.strs.set(key, [next, have?.[1] ?? s]);
    }
  }
}

function bump<K>(m: Map<K, number>, k: K, by: number): void {
  const n = (m.get(k) ?? 0) + by;
  if (n <= 0) m.delete(k);
  else m.set(k, n);
}

const top = <K>(m: Map<K, number>): K | undefined => {
  let best: K | undefined;
  let n = -1;
  for (const [k, c] of m) if (c > n) [best, n] = [k, c];
  return best;
};

/** A path's counts as plain data (JSON-safe). */
export interface PathStatsSnapshot {
  items: number;
  label: string;
  context: string;
  kinds: Array<[Fact['kind'], number]>;
  units: Array<[string, number]>;
  srcUnits: Array<[string, number]>;
  dimensions: Array<[string, number]>;
  /** Each number and its count, one after the other: value, count, value, count… */
  nums: number[];
  /** Each value's first spelling (its folded value is its lowercase) as one text, each one's length and count. */
  strs: { text: string; lengths: number[]; counts: number[] };
}

/** A site's profile counts as plain data (JSON-safe): ProfileBuilder.snapshot / restore. */
export interface ProfileSnapshot {
  site: string;
  items: number;
  changes: number;
  types: Array<[string, number]>;
  words: Array<[string, number]>;
  paths: Array<[string, PathStatsSnapshot]>;
  /**
   * The profile these counts make, computed when saved: a reopened index answers its first
   * question without computing it again (its quantiles sort every number of the site: ~0.3 s
   * for a 300k-item one). Absent in older files.
   */
  profile?: SiteProfile;
}

/** The counts behind one site's profile. */
export class ProfileBuilder {
  private items = 0;
  private readonly types = new Map<string, number>();
  private readonly paths = new Map<string, PathStats>();
  private readonly words = new Map<string, number>();
  private changes = 0;
  private cached: { at: number; profile: SiteProfile } | undefined;

  constructor(readonly site: string) {}

  get size(): number {
    return this.items;
  }

  /**
   * The counts as plain data (`restore` reads them back): a saved index reopens without
   * re-reading its items. `withProfile`: the profile they make too, computed now if it is not
   * yet (a save that will be opened again; a store's snapshots in the middle of a load leave it).
   */
  snapshot(withProfile = true): ProfileSnapshot {
    return {
      site: this.site,
      items: this.items,
      changes: this.changes,
      types: [...this.types],
      words: [...this.words],
      paths: [...this.paths].map(([p, s]) => [p, s.snapshot()]),
      ...(withProfile ? { profile: this.profile() } : {}),
    };
  }

  static restore(s: ProfileSnapshot): ProfileBuilder {
    const out = new ProfileBuilder(s.site);
    out.items = s.items;
    out.changes = s.changes;
    for (const [k, n] of s.types) out.types.set(k, n);
    for (const [k, n] of s.words) out.words.set(k, n);
    for (const [p, ps] of s.paths) out.paths.set(p, PathStats.restore(ps));
    // the saved profile stands for these counts when it is of them (else it is computed when asked)
    const saved = SiteProfileSchema.safeParse(s.profile);
    if (saved.success && saved.data.site === s.site && saved.data.version === out.version)
      out.cached = { at: out.changes, profile: saved.data };
    return out;
  }

  add(c: ItemContribution): void {
    this.apply(c, 1);
  }

  remove(c: ItemContribution): void {
    this.apply(c, -1);
  }

  private apply(c: ItemContribution, sign: 1 | -1): void {
    this.items += sign;
    this.changes++;
    bump(this.types, c.type, sign);
    for (const w of c.words) bump(this.words, w, sign);
    for (const [path, part] of c.paths) {
      let s = this.paths.get(path);
      if (!s) this.paths.set(path, (s = new PathStats()));
      s.apply(part, sign);
      if (s.items <= 0) this.paths.delete(path);
    }
  }

  /** A version that changes with every add and remove. */
  get version(): string {
    return `${this.items}-${this.changes}`;
  }

  /** The profile as it stands (computed once per version). */
  profile(): SiteProfile {
    if (this.cached?.at === this.changes) return this.cached.profile;
    const types = [...this.types.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([type, count]) => ({ type, count }));
    const properties = [...this.paths.entries()]
      .map(([path, s]) => propertyProfile(path, s))
      .filter((p): p is PropertyProfile => p !== undefined)
      .sort((a, b) => b.count - a.count || (a.path < b.path ? -1 : 1));
    const siteWords =
      this.items >= MIN_ITEMS_FOR_SITE_WORDS
        ? [...this.words.entries()]
            .filter(([, n]) => n >= this.items * SITE_WORD_SHARE)
            .sort((a, b) => b[1] - a[1])
            .slice(0, 200)
            .map(([w]) => w)
        : [];
    const profile: SiteProfile = {
      site: this.site,
      version: this.version,
      itemCount: this.items,
      types,
      mainTypes: mainTypes(types),
      properties,
      siteWords,
    };
    this.cached = { at: this.changes, profile };
    return profile;
  }
}

/** The types a site is about: furniture left out unless it is all there is, minor types dropped. */
export function mainTypes(types: readonly { type: string; count: number }[]): string[] {
  const content = types.filter((t) => !FURNITURE_TYPES.has(t.type));
  const pool = content.length ? content : types;
  const most = pool[0]?.count ?? 0;
  return pool.filter((t) => t.count >= most * 0.1).map((t) => t.type);
}

function propertyProfile(path: string, s: PathStats): PropertyProfile | undefined {
  const kindOf = top(s.kinds);
  if (!kindOf || s.items <= 0) return undefined;
  const base = { path, label: s.label, context: s.context, count: s.items };
  const unit = top(s.units);
  const displayUnit = top(s.srcUnits);
  const dimension = top(s.dimensions);
  if (kindOf === 'number' || kindOf === 'date') {
    // the distinct values ascending with their counts (each counted at most 10,000 times), for
    // quantiles: listing every occurrence and sorting it took ~0.9 s over a 300k-item site
    const distinct: number[] = [];
    const occurrences: number[] = [];
    let integer = true;
    for (const [v, n] of s.numEntries()) {
      if (!Number.isInteger(v)) integer = false;
      if (n <= 0) continue;
      distinct.push(v);
      occurrences.push(Math.min(n, 10_000));
    }
    if (distinct.length === 0) return undefined;
    const m = distinct.length;
    const index = new Uint32Array(m);
    for (let i = 0; i < m; i++) index[i] = i;
    const order = sortByKeys(index, Float64Array.from(distinct));
    const values = new Float64Array(m);
    const counts = new Uint32Array(m);
    for (let i = 0; i < m; i++) {
      values[i] = distinct[order[i]!]!;
      counts[i] = occurrences[order[i]!]!;
    }
    return {
      ...base,
      kind: kindOf,
      ...(unit ? { unit } : {}),
      ...(displayUnit ? { displayUnit } : {}),
      ...(dimension ? { dimension } : {}),
      min: values[0]!,
      max: values[values.length - 1]!,
      quantiles: quantilesOfCounted(values, counts)!,
      integer,
      distinct: s.distinctNums,
    };
  }
  const kind: PropertyKind = kindOf === 'name' ? 'name' : kindOf === 'text' ? 'text' : 'enum';
  if (kind === 'text') return { ...base, kind };
  // a name's values are not listed (only counted): its 100k+ entries are not walked
  const values = (kind === 'name' ? [] : [...s.strEntries()].map(([, v]) => v))
    .sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? -1 : 1))
    .slice(0, kind === 'name' ? 0 : MAX_VALUES)
    .map(([count, value]) => ({ value, count }));
  return { ...base, kind, values, distinct: s.distinctStrs };
}
