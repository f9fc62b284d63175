import type { Derived, PropertyProfile, SiteProfile } from '@askbus/contracts';
import { splitCamelCase, STOPWORDS } from '@askbus/search-core';
import type { Lexicon } from './lexicon';
import { nameKey } from './names';
import { DIMENSION_WORDS, UNITS, type Dimension } from './units';
import { isYearValued } from './format';

/**
 * A site's profile made ready for reading questions: each property with the words that name it
 * (its label, its unit, its dimension, their base forms), every enumeration value by its words,
 * the site's main date and rating, pairs of numbers that add up (home and away score), and
 * income and cost properties whose difference is a profit. Built once per profile version.
 */
export interface PropertyModel extends PropertyProfile {
  /** Words that name it, with how strongly (1 = its head word or whole label). */
  words: Map<string, number>;
  /** The label's last word in base form ("mass" in "body mass"). */
  head: string;
  /** Its role in money: what comes in (gross, sales) or goes out (budget, cost). */
  role?: 'income' | 'cost';
}

export interface ValueRef {
  prop: PropertyModel;
  value: string;
  count: number;
}

export interface TypeModel {
  type: string;
  count: number;
  /** Words naming it: its own words (TVSeries → tv series) and WordNet synonyms ("film" for Movie). */
  words: Map<string, number>;
}

/** Words of a label in base form ("cylinders" → cylinder), stopwords left out. */
function labelWords(label: string, lexicon: Lexicon): string[] {
  return label
    .split(/\s+/)
    .filter((w) => w && !STOPWORDS.has(w))
    .map((w) => lexicon.baseForms(w)[0] ?? w);
}

const UNIT_WORDS = new Map<string, string[]>();
for (const u of UNITS) {
  const list = UNIT_WORDS.get(u.canonical) ?? [];
  for (const s of u.spellings) if (s.length >= 2 && !list.includes(s)) list.push(s);
  UNIT_WORDS.set(u.canonical, list);
}

/**
 * A number without a unit whose label WordNet places under money coming in or going out (a
 * `price` with no currency given, a `salary`): an amount of money in a currency the data does
 * not say, so "under $20" and "cheapest" can bound and sort it. Its numbers are shown as written.
 */
function withMoneyInferred(p: PropertyProfile, label: readonly string[], lexicon: Lexicon): PropertyProfile {
  if (p.kind !== 'number' || p.dimension || p.unit) return p;
  const moneyWords = label.filter((w) => lexicon.concepts(w).some((k) => k === 'cost' || k === 'income'));
  // the head word decides ("price rank" is a rank); a one-word label is its own head
  return moneyWords.includes(label.at(-1) ?? '') ? { ...p, dimension: 'money' } : p;
}

/** A label that counts something: "number of pages", "count of votes", "total of goals". */
const COUNT_OF = /^(number|count|total|amount) of \S/;

function propertyModel(profile: PropertyProfile, lexicon: Lexicon): PropertyModel {
  const label = labelWords(profile.label, lexicon);
  const p = withMoneyInferred(profile, label, lexicon);
  const words = new Map<string, number>();
  const add = (w: string, weight: number): void => {
    if (w && (words.get(w) ?? 0) < weight) words.set(w, weight);
  };
  const head = label.at(-1) ?? p.label;
  add(p.label, 1);
  add(label.join(' '), 1);
  // "number of pages": the first word only says the property counts what follows "of"; its
  // other senses (a magazine's number, a number on stage) name nothing here, and "published"
  // must not find the page count through them
  const countMarker = COUNT_OF.exec(p.label)?.[1];
  label.forEach((w, i) => {
    if (i === 0 && w === countMarker && label.length > 1) {
      add(w, 0.5);
      return;
    }
    const weight = i === label.length - 1 ? 1 : 0.8;
    add(w, weight);
    // WordNet's neighbours of the label's words, weaker ("score" for "goals", "magnitude" for "size")
    for (const [n, v] of lexicon.neighbours(w)) add(n, v * weight);
  });
  for (const w of labelWords(p.context, lexicon)) add(w, 0.3);
  if (p.dimension) for (const w of DIMENSION_WORDS[p.dimension as Dimension] ?? []) add(w, 0.7);
  if (p.unit) for (const w of UNIT_WORDS.get(p.unit) ?? []) add(w.toLowerCase(), 0.75);
  // a count whose values name what they count ("9 servings"): that word names the property too
  if (p.dimension === 'count' && p.unit && !UNIT_WORDS.has(p.unit))
    for (const w of [p.unit, ...lexicon.baseForms(p.unit)]) {
      add(w, 0.85);
      // a count of doings names its verb too: "servings" what a recipe serves
      const stem = /^(.{3,})ing$/.exec(w)?.[1];
      if (stem)
        for (const verb of [stem, `${stem}e`]) if (lexicon.senses(verb, 'v').length > 0) add(verb, 0.85);
    }
  let role: PropertyModel['role'];
  // a price level ("$$") costs more as it grows, as an amount does
  if (p.kind === 'number' && (p.dimension === 'money' || p.dimension === 'price level')) {
    const concepts = new Set(label.flatMap((w) => lexicon.concepts(w)));
    if (concepts.has('income') && !concepts.has('cost')) role = 'income';
    else if (concepts.has('cost') && !concepts.has('income')) role = 'cost';
  }
  return { ...p, words, head, ...(role ? { role } : {}) };
}

/** "TVSeries" → "tv series"; "MusicRecording" → "music recording". */
function typeWords(type: string): string {
  return splitCamelCase(type).toLowerCase();
}

export class SiteModel {
  readonly properties: PropertyModel[];
  readonly byPath = new Map<string, PropertyModel>();
  /** Folded value words ("pg 13", "gentoo") → the properties that hold that value. */
  readonly values = new Map<string, ValueRef[]>();
  /** A word → values containing it, per property (for "comedy" in "Romantic Comedy"). */
  readonly valueWords = new Map<string, Map<PropertyModel, number>>();
  /** How many of the site's main types end in each word ("article": NewsArticle, BlogArticle…). */
  private readonly typeHeads = new Map<string, number>();
  readonly types: TypeModel[];
  readonly siteWords: Set<string>;
  /** The date most items carry (release, model year, start) — what "the 90s" is about. */
  readonly primaryDate: PropertyModel | undefined;
  /** The site's rating (what "best" and "top rated" sort by). */
  readonly rating: PropertyModel | undefined;
  /** Number properties that are two sides of one measure (same head word and unit). */
  readonly pairs: { a: PropertyModel; b: PropertyModel }[];
  /** Income minus cost, when the items have both (for hits, flops, profits and losses). */
  readonly profit: Derived | undefined;
  readonly itemCount: number;
  readonly key: string;

  constructor(
    readonly profiles: readonly SiteProfile[],
    readonly lexicon: Lexicon,
  ) {
    this.key = profiles.map((p) => `${p.site}@${p.version}`).join(',');
    this.itemCount = profiles.reduce((n, p) => n + p.itemCount, 0);
    const merged = new Map<string, PropertyProfile>();
    for (const profile of profiles) {
      for (const p of profile.properties) {
        const have = merged.get(p.path);
        merged.set(p.path, have ? mergeProperty(have, p) : p);
      }
    }
    this.properties = [...merged.values()].map((p) => propertyModel(p, lexicon));
    for (const p of this.properties) this.byPath.set(p.path, p);
    for (const p of this.properties) {
      if (p.kind !== 'enum') continue;
      for (const v of p.values ?? []) {
        const key = nameKey(v.value);
        if (!key) continue;
        const refs = this.values.get(key) ?? [];
        refs.push({ prop: p, value: v.value, count: v.count });
        this.values.set(key, refs);
        for (const w of new Set(key.split(' '))) {
          if (STOPWORDS.has(w)) continue;
          const m = this.valueWords.get(w) ?? new Map<PropertyModel, number>();
          m.set(p, (m.get(p) ?? 0) + v.count);
          this.valueWords.set(w, m);
        }
      }
    }
    const typeCounts = new Map<string, number>();
    for (const profile of profiles)
      for (const t of profile.types) typeCounts.set(t.type, (typeCounts.get(t.type) ?? 0) + t.count);
    const main = new Set(profiles.flatMap((p) => p.mainTypes));
    const mainTypes = [...typeCounts.keys()].filter((t) => main.has(t));
    for (const t of mainTypes) {
      const head = typeWords(t).split(' ').at(-1)!;
      this.typeHeads.set(head, (this.typeHeads.get(head) ?? 0) + 1);
    }
    this.types = mainTypes.map((type) => ({
      type,
      count: typeCounts.get(type)!,
      words: this.typeWordsOf(type),
    }));
    this.siteWords = new Set(profiles.flatMap((p) => p.siteWords));
    // the date most items carry; of two carried alike, the earlier (an event's start before its
    // end, a publication before its modification)
    const median = (p: PropertyModel): number => p.quantiles?.[5] ?? 0;
    const dates = this.properties
      .filter((p) => p.kind === 'date')
      .sort((a, b) => b.count - a.count || median(a) - median(b));
    // no date at all: a number that is a year (a wine's vintage, a house's year built)
    this.primaryDate =
      dates[0] ??
      this.properties
        .filter((p) => p.kind === 'number' && isYearValued(p))
        .sort((a, b) => b.count - a.count)[0];
    const ratings = this.properties
      .filter(
        (p) => p.kind === 'number' && (p.dimension === 'rating' || /\b(rating|score|stars?)\b/.test(p.label)),
      )
      .sort(
        (a, b) => Number(b.dimension === 'rating') - Number(a.dimension === 'rating') || b.count - a.count,
      );
    this.rating = ratings[0];
    this.pairs = [];
    const numbers = this.properties.filter((p) => p.kind === 'number');
    for (let i = 0; i < numbers.length; i++)
      for (let j = i + 1; j < numbers.length; j++) {
        const a = numbers[i]!;
        const b = numbers[j]!;
        if (
          a.head === b.head &&
          (a.unit ?? '') === (b.unit ?? '') &&
          a.label !== b.label &&
          a.dimension !== 'rating' &&
          alike(a, b)
        )
          this.pairs.push({ a, b });
      }
    const income = numbers
      .filter((p) => p.role === 'income')
      .sort((a, b) => (b.max ?? 0) - (a.max ?? 0) || b.count - a.count)[0];
    const cost = numbers
      .filter((p) => p.role === 'cost' && p.unit === income?.unit)
      .sort((a, b) => b.count - a.count)[0];
    this.profit =
      income && cost
        ? {
            op: 'difference',
            a: income.path,
            b: cost.path,
            label: `profit (${income.label} − ${cost.label})`,
            ...(income.unit ? { unit: income.unit } : {}),
          }
        : undefined;
  }

  private typeWordsOf(type: string): Map<string, number> {
    const words = new Map<string, number>();
    const own = typeWords(type);
    words.set(own, 1);
    const last = own.split(' ').at(-1)!;
    // "article" names a NewsArticle when no other type of the site ends in it
    const shared = this.typeHeads.get(last) ?? 0;
    words.set(last, own === last ? 1 : shared > 1 ? 0.7 : 0.9);
    // synonyms of the type's word in its first noun sense ("film", "picture" for Movie)
    const first = this.lexicon.senses(own, 'n')[0] ?? this.lexicon.senses(last, 'n')[0];
    if (first)
      for (const [w, weight] of this.lexicon.related(own))
        if (weight >= 0.9) words.set(w, Math.max(words.get(w) ?? 0, 0.9));
    return words;
  }

  /**
   * The properties a word (or phrase) names, best first, with a score 0..1: its WordNet
   * relations met against each property's words. `kinds` keeps only properties of those kinds.
   */
  resolve(
    word: string,
    opts: { kinds?: readonly string[]; dimension?: string; roots?: readonly string[] } = {},
  ): { prop: PropertyModel; score: number }[] {
    const related = new Map(this.lexicon.related(word));
    for (const r of opts.roots ?? [])
      for (const [w, s] of this.lexicon.related(r)) if ((related.get(w) ?? 0) < s) related.set(w, s);
    related.set(word.toLowerCase(), 1);
    const most = Math.max(1, ...this.properties.map((p) => p.count));
    const out: { prop: PropertyModel; score: number }[] = [];
    for (const prop of this.properties) {
      if (opts.kinds && !opts.kinds.includes(prop.kind)) continue;
      if (opts.dimension && prop.dimension !== opts.dimension) continue;
      let best = 0;
      for (const [w, weight] of related) {
        const pw = prop.words.get(w);
        if (pw !== undefined && weight * pw > best) best = weight * pw;
      }
      if (best > 0) out.push({ prop, score: best * (0.9 + 0.1 * (prop.count / most)) });
    }
    return out.sort((a, b) => b.score - a.score);
  }

  /** The site's type a word names ("films" → Movie), with a score. */
  typeOf(word: string): { type: string; score: number } | undefined {
    let best: { type: string; score: number } | undefined;
    const forms = new Set([word, ...this.lexicon.baseForms(word)]);
    for (const t of this.types) {
      for (const f of forms) {
        const s = t.words.get(f);
        if (s !== undefined && (!best || s > best.score)) best = { type: t.type, score: s };
      }
    }
    return best;
  }
}

/** Two sides of one measure have values alike (home and away score), unlike a part and its whole (US and worldwide gross). */
function alike(a: PropertyProfile, b: PropertyProfile): boolean {
  const ma = a.quantiles?.[5];
  const mb = b.quantiles?.[5];
  const xa = a.max;
  const xb = b.max;
  if (ma === undefined || mb === undefined || xa === undefined || xb === undefined) return false;
  const ratio = (x: number, y: number): number =>
    Math.min(x, y) <= 0 ? (x === y ? 1 : Infinity) : Math.max(x, y) / Math.min(x, y);
  return ratio(ma, mb) <= 1.5 && ratio(xa, xb) <= 1.5;
}

function mergeProperty(a: PropertyProfile, b: PropertyProfile): PropertyProfile {
  const count = a.count + b.count;
  const values =
    a.values || b.values
      ? [...(a.values ?? []), ...(b.values ?? [])].sort((x, y) => y.count - x.count).slice(0, 5_000)
      : undefined;
  return {
    ...a,
    count,
    ...(a.min !== undefined || b.min !== undefined
      ? { min: Math.min(a.min ?? Infinity, b.min ?? Infinity) }
      : {}),
    ...(a.max !== undefined || b.max !== undefined
      ? { max: Math.max(a.max ?? -Infinity, b.max ?? -Infinity) }
      : {}),
    ...(values ? { values } : {}),
  };
}
