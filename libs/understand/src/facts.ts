import { SKIP_KEYS as SEARCH_SKIP_KEYS, splitCamelCase } from '@askbus/search-core';
import { canonicalUnit, toCanonical, unitOf, type Dimension, type Unit } from './units';

/**
 * An item's facts: every value its schema.org object carries, flattened to a property path with
 * the words that name it, its kind and (for numbers) its unit converted to the canonical one.
 * Nothing here knows a site: paths and labels come from the data's own keys, `PropertyValue`
 * names, `unitText`/`unitCode` and units written in keys ("Body Mass (g)", "Weight_in_lbs").
 */
export type FactKind = 'number' | 'date' | 'string' | 'text' | 'name';

export interface Fact {
  /** `weight`, `vehicleEngine.enginePower`, `additionalProperty.body mass`, `director`. */
  path: string;
  /** The property's own words, lowercase ("engine power", "body mass"). */
  label: string;
  /** Words of the enclosing objects ("vehicle engine"). */
  context: string;
  kind: FactKind;
  /** Numbers in the canonical unit; dates as fractional years (1998.45). */
  num?: number;
  /** Strings as written (names, values, text); for dates the date as written. */
  str?: string;
  unit?: string;
  /** The unit as the data wrote it (`lb`, `s`, `cu in`), for showing the number the site's way. */
  srcUnit?: string;
  dimension?: Dimension;
}

/** Keys that are links, identifiers or markup, not facts about the item: search-core's, and page markup. */
const SKIP_KEYS = new Set([
  ...SEARCH_SKIP_KEYS,
  'unitText',
  'mainEntityOfPage',
  'potentialAction',
  'isPartOf',
  'breadcrumb',
  '@language',
]);
/** Top-level keys that hold the item's own name. */
const NAME_KEYS = new Set(['name', 'headline', 'alternateName', 'title']);
/** Keys whose strings are prose about the item. */
const TEXT_KEYS = new Set([
  'description',
  'text',
  'articleBody',
  'abstract',
  'reviewBody',
  'disambiguatingDescription',
  'summary',
]);

const MAX_DEPTH = 6;
const MAX_ARRAY = 100;
const MAX_FACTS = 500;
/** Longer strings, or more words, are prose rather than a value. */
const MAX_VALUE_CHARS = 80;
const MAX_VALUE_WORDS = 10;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** "engineDisplacement" → "engine displacement"; "home_team" → "home team"; "Body Mass (g)" → "body mass". */
export function keyWords(key: string, camelCase = true): string {
  const spaced = key.replace(/\([^)]*\)/g, ' ');
  return (camelCase ? splitCamelCase(spaced) : spaced)
    .replace(/[_\-.:/]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

/**
 * A key's words and the unit it is written in, when the key says: "Body Mass (g)" → body mass, g;
 * "Weight_in_lbs" → weight, lb; "Miles_per_Gallon" → miles per gallon, mpg (the key is a unit).
 */
const labelCache = new Map<string, { label: string; unit?: Unit }>();

/** keyLabel, remembered: keys repeat from item to item. */
export function keyLabel(key: string, camelCase = true): { label: string; unit?: Unit } {
  const cacheKey = `${camelCase ? 1 : 0}${key}`;
  let hit = labelCache.get(cacheKey);
  if (!hit) {
    hit = readKeyLabel(key, camelCase);
    if (labelCache.size > 20_000) labelCache.clear();
    labelCache.set(cacheKey, hit);
  }
  return hit;
}

function readKeyLabel(key: string, camelCase: boolean): { label: string; unit?: Unit } {
  const paren = /\(([^)]{1,20})\)\s*$/.exec(key);
  const parenUnit = paren ? unitOf(paren[1]) : undefined;
  let label = keyWords(key, camelCase);
  if (parenUnit) return { label, unit: parenUnit };
  const inUnit = /^(.+?) in ([a-z/ ]{1,20})$/.exec(label);
  const trailing = inUnit ? unitOf(inUnit[2]) : undefined;
  if (inUnit && trailing) return { label: inUnit[1]!, unit: trailing };
  const whole = label.includes(' ') ? unitOf(label) : undefined;
  if (whole) return { label, unit: whole };
  // "monthsOfExperience", "hoursOfBatteryLife": a length of time of something
  const lead = /^([a-z]+) of \S/.exec(label);
  const leadUnit = lead ? unitOf(lead[1]) : undefined;
  if (leadUnit?.dimension === 'time') return { label, unit: leadUnit };
  // schema.org's "numTracks", "numAdults": the abbreviation read out
  label = label.replace(/\s+/g, ' ').replace(/^num (?=\S)/, 'number of ');
  return { label };
}

/** A finite number from a number or a numeric string ("7.3", "1,200"); else undefined. */
export function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const t = v.trim().replace(/,(?=\d{3}\b)/g, '');
  if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t)) return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

const DATE = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?(?:[T ](?:(\d{2}):(\d{2}))?[\d:.]*(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** "1998-06-12" → 1998.44; "1998" → 1998; anything else undefined. */
export function dateToYear(text: string): number | undefined {
  const m = DATE.exec(text.trim());
  if (!m) return undefined;
  const year = Number(m[1]);
  if (year < 1000 || year > 2999) return undefined;
  const month = m[2] ? Number(m[2]) : 1;
  const day = m[3] ? Number(m[3]) : 1;
  if (month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  // the time of day as written (the wall clock where it happens; its offset is left aside so the
  // day stays the one written): an event's start comes before its end on the same day
  const hour = m[4] ? Math.min(Number(m[4]), 23) : 0;
  const minute = m[5] ? Math.min(Number(m[5]), 59) : 0;
  const start = Date.UTC(year, 0, 1);
  const at = Date.UTC(year, month - 1, day, hour, minute);
  const end = Date.UTC(year + 1, 0, 1);
  return year + (at - start) / (end - start);
}

/** ISO 8601 durations ("PT2H14M", "P1DT3H") in minutes. */
export function durationMinutes(text: string): number | undefined {
  const m =
    /^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i.exec(
      text.trim(),
    );
  if (!m || text.trim().length < 3) return undefined;
  const [, d = '0', h = '0', min = '0', s = '0'] = m;
  return Number(d) * 1440 + Number(h) * 60 + Number(min) + Number(s) / 60;
}

/** "3,504 lbs", "$1.2 million", "150 min" → value in its unit; plain prose → undefined. */
export function quantityInText(text: string): { value: number; unit: Unit } | undefined {
  const m = /^([$€£¥])?\s*([-+]?[\d,]*\.?\d+)\s*(thousand|million|billion)?\s*([^\d\s][^\d]{0,24})?$/i.exec(
    text.trim(),
  );
  if (!m) return undefined;
  const [, currency, digits, scale, rest] = m;
  const value = toNumber(digits!.replace(/,/g, ''));
  if (value === undefined) return undefined;
  const factor = scale ? { thousand: 1e3, million: 1e6, billion: 1e9 }[scale.toLowerCase() as 'thousand'] : 1;
  const unit = currency ? unitOf(currency) : rest ? unitOf(rest.trim()) : undefined;
  if (!unit) return undefined;
  return { value: value * factor, unit };
}

interface Walk {
  out: Fact[];
}

function push(w: Walk, fact: Fact): void {
  if (w.out.length < MAX_FACTS) w.out.push(fact);
}

/** A number with a unit (from the data or the key) as a fact. */
function numberFact(
  path: string,
  label: string,
  context: string,
  value: number,
  unit: Unit | undefined,
): Fact {
  if (!unit) return { path, label, context, kind: 'number', num: value };
  return {
    path,
    label,
    context,
    kind: 'number',
    num: toCanonical(value, unit),
    unit: unit.canonical,
    srcUnit: unit.spellings[0]!,
    dimension: unit.dimension,
  };
}

/**
 * Bump when `extractFacts` reads items differently: a store that keeps each item's facts
 * (PostgreSQL's `facts` column) makes them again. 2: prices' currencies, food energy,
 * enumeration members written as URLs, a MonetaryAmount's QuantitativeValue. 3: areas
 * (FTK, "sq ft") and amounts of data ("19MB"), price levels ("$$"), schema.org types given as
 * values ("GameApplication"), counts of a thing named by a word ("9 servings"), language and
 * country codes by their names, dates with their time of day, keys that lead with a unit of time.
 * 4: a Country or Language entity named by its code, and a nationality's code, by their names.
 */
export const FACTS_VERSION = 4;

/** A schema.org enumeration member written as its URL. */
const SCHEMA_MEMBER = /^https?:\/\/schema\.org\/([A-Z][A-Za-z]+)$/;

/** The name of a schema.org enumeration member written as its URL ("In Stock"), or undefined. */
export function schemaMemberName(value: string): string | undefined {
  const m = SCHEMA_MEMBER.exec(value.trim());
  return m ? splitCamelCase(m[1]!) : undefined;
}

/**
 * A member's words without its enumeration's name where the property is named after it:
 * OnlineEventAttendanceMode of `eventAttendanceMode` is "Online"; InStock stays "In Stock".
 */
function memberWords(member: string, label: string): string {
  // a one-letter word is a prefix of the next ("EBook": an ebook, not "E Book")
  const words = splitCamelCase(member)
    .split(' ')
    .reduce<string[]>((out, w) => {
      const last = out.at(-1);
      if (last?.length === 1) out[out.length - 1] = last + w.toLowerCase();
      else out.push(w);
      return out;
    }, []);
  const named = label.toLowerCase().split(' ');
  const tail = words.slice(-named.length).map((w) => w.toLowerCase());
  const repeats = words.length > named.length && tail.join(' ') === named.join(' ');
  return (repeats ? words.slice(0, -named.length) : words).join(' ');
}

/** A CamelCase name of two or more words, its last word apart: "GameApplication". */
const NAMED_TYPE = /^((?:[A-Z][a-z]+)+)([A-Z][a-z]+)$/;

/** A whole number and one word: "9 servings", "12 cookies". */
const COUNTED = /^(\d{1,7})\s+([A-Za-z]{3,20})$/;

const LANGUAGES = new Intl.DisplayNames(['en'], { type: 'language' });
const REGIONS = new Intl.DisplayNames(['en'], { type: 'region' });

/** The English name of a BCP 47 language code under a "language" key, or an ISO region code under a "country" key. */
function codeName(value: string, label: string): string | undefined {
  const head = label.split(' ').at(-1);
  try {
    if (head === 'language' && /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(value)) {
      const name = LANGUAGES.of(value);
      return name && name.toLowerCase() !== value.toLowerCase() ? name : undefined;
    }
    // schema.org's nationality is a Country
    if ((head === 'country' || label === 'nationality') && /^[A-Z]{2}$/.test(value)) {
      const name = REGIONS.of(value);
      return name && name !== value && !/^Unknown/.test(name) ? name : undefined;
    }
  } catch {
    // not a well-formed code after all
  }
  return undefined;
}

/** One currency sign written one to five times: "$", "€€€". */
const PRICE_LEVEL = /^([$€£¥])\1{0,4}$/;

/** A string leaf: a date, a duration, a number with a unit, a short value, or prose. */
function stringFact(
  path: string,
  label: string,
  context: string,
  s: string,
  keyUnit: Unit | undefined,
  textKey: boolean,
): Fact | undefined {
  const v = s.trim();
  // a schema.org enumeration member ("https://schema.org/OnlineEventAttendanceMode"): its words
  // are the value ("Online"); other links are not facts
  const member = SCHEMA_MEMBER.exec(v);
  if (member) return { path, label, context, kind: 'string', str: memberWords(member[1]!, label) };
  // a language or a country written as its code ("fr", "en-US", "DE"), as schema.org's
  // inLanguage and addressCountry take them: its English name, which questions use
  const named = codeName(v, label);
  if (named) return { path, label, context, kind: 'string', str: named };
  // a constant as schema.org's examples write some ("FULL_TIME"): its words
  if (/^[A-Z]+(?:_[A-Z]+)+$/.test(v)) {
    const text = v.replace(/_/g, ' ').toLowerCase();
    return { path, label, context, kind: 'string', str: text[0]!.toUpperCase() + text.slice(1) };
  }
  // a schema.org type named as a value, ending in a word of the property ("GameApplication" of
  // `applicationCategory`): the words before it are the value ("Game")
  const typed = NAMED_TYPE.exec(v);
  if (typed && label.split(' ').includes(typed[2]!.toLowerCase()))
    return { path, label, context, kind: 'string', str: splitCamelCase(typed[1]!) };
  if (v === '' || /^https?:\/\//i.test(v)) return undefined;
  // a price level ("$$", schema.org's priceRange example): a rank of cheap to dear, not an amount
  const level = PRICE_LEVEL.exec(v);
  if (level && !textKey)
    return {
      path,
      label,
      context,
      kind: 'number',
      num: v.length,
      unit: level[1]!,
      srcUnit: level[1]!,
      dimension: 'price level',
    };
  if (!textKey) {
    const year = dateToYear(v);
    if (year !== undefined) return { path, label, context, kind: 'date', num: year, str: v };
    const minutes = durationMinutes(v);
    if (minutes !== undefined)
      return {
        path,
        label,
        context,
        kind: 'number',
        num: minutes,
        unit: 'min',
        srcUnit: 'min',
        dimension: 'time',
      };
    const n = toNumber(v);
    if (n !== undefined) return numberFact(path, label, context, n, keyUnit);
    const q = quantityInText(v);
    if (q) return numberFact(path, label, context, q.value, q.unit);
    // a count of things named by one word ("9 servings", "4 people"): the word is its unit
    const counted = COUNTED.exec(v);
    if (counted && Number(counted[1]) <= 1e6)
      return {
        path,
        label,
        context,
        kind: 'number',
        num: Number(counted[1]),
        unit: counted[2]!.toLowerCase(),
        srcUnit: counted[2]!.toLowerCase(),
        dimension: 'count',
      };
  }
  const long = v.length > MAX_VALUE_CHARS || v.split(/\s+/).length > MAX_VALUE_WORDS;
  return { path, label, context, kind: textKey || long ? 'text' : 'string', str: v.slice(0, 2_000) };
}

const join = (a: string, b: string): string => (a ? `${a}.${b}` : b);
const words = (a: string, b: string): string => (a && b ? `${a} ${b}` : a || b);

/** The unit an object declares (`unitText` or `unitCode`; a MonetaryAmount's `currency`). */
function declaredUnit(o: Record<string, unknown>): Unit | undefined {
  for (const k of ['unitText', 'unitCode']) {
    const v = o[k];
    if (typeof v === 'string') {
      const unit = unitOf(v);
      if (unit) return unit;
    }
  }
  return currencyOf(o, 'currency');
}

/**
 * The currency an object declares for its prices: schema.org's `priceCurrency` (Offer,
 * PriceSpecification, …) is the unit of the object's `price`, `lowPrice`, `highPrice`,
 * `minPrice` and `maxPrice`; a MonetaryAmount's `currency` that of its value. Only a currency
 * (an ISO code or sign units.ts knows) counts.
 */
function currencyOf(o: Record<string, unknown>, key: 'priceCurrency' | 'currency'): Unit | undefined {
  const v = o[key];
  const unit = typeof v === 'string' ? unitOf(v.trim()) : undefined;
  return unit?.dimension === 'money' ? unit : undefined;
}

/** The keys `priceCurrency` is the currency of (schema.org: "the currency of the price"). */
const PRICE_KEY = /^(price|lowPrice|highPrice|minPrice|maxPrice)$/;

/** A key's unit: written in the key ("Weight_in_lbs"), else the object's currency for its prices. */
function keyUnitIn(key: string, own: Unit | undefined, currency: Unit | undefined): Unit | undefined {
  return own ?? (currency && PRICE_KEY.test(key) ? currency : undefined);
}

/** Percent written as a unit ("percent") or as a `%` key suffix. */
const PERCENT = unitOf('%');

function walkValue(
  w: Walk,
  value: unknown,
  path: string,
  label: string,
  context: string,
  keyUnit: Unit | undefined,
  depth: number,
  textKey: boolean,
): void {
  if (depth > MAX_DEPTH || value === null || value === undefined) return;
  if (Array.isArray(value)) {
    for (const v of value.slice(0, MAX_ARRAY))
      walkValue(w, v, path, label, context, keyUnit, depth + 1, textKey);
    return;
  }
  if (typeof value === 'number') {
    if (Number.isFinite(value)) {
      if (/\byear\b/.test(label) && Number.isInteger(value) && value >= 1000 && value <= 2999 && !keyUnit)
        push(w, { path, label, context, kind: 'date', num: value, str: String(value) });
      else push(w, numberFact(path, label, context, value, keyUnit));
    }
    return;
  }
  if (typeof value === 'boolean') {
    push(w, { path, label, context, kind: 'string', str: value ? 'yes' : 'no' });
    return;
  }
  if (typeof value === 'string') {
    const f = stringFact(path, label, context, value, keyUnit, textKey);
    if (f) push(w, f);
    return;
  }
  if (!isRecord(value)) return;
  walkObject(w, value, path, label, context, keyUnit, depth);
}

/** Objects: a PropertyValue, a QuantitativeValue, a Rating, an entity with a name, or a structure. */
function walkObject(
  w: Walk,
  o: Record<string, unknown>,
  path: string,
  label: string,
  context: string,
  keyUnit: Unit | undefined,
  depth: number,
): void {
  const type = typeof o['@type'] === 'string' ? o['@type'] : '';
  // A named property: its name is the property ("body mass"), its value the fact.
  const pvName =
    typeof o.name === 'string' ? o.name : typeof o.propertyID === 'string' ? o.propertyID : undefined;
  if (
    (type === 'PropertyValue' || (pvName !== undefined && 'value' in o && !('ratingValue' in o))) &&
    pvName
  ) {
    const own = keyLabel(pvName, false);
    const unit = declaredUnit(o) ?? own.unit;
    const pvPath = join(path, pvName.trim().toLowerCase());
    const inner = o.value;
    if (isRecord(inner)) walkObject(w, inner, pvPath, own.label, words(context, label), unit, depth + 1);
    else
      walkValue(
        w,
        inner ?? o.minValue,
        pvPath,
        own.label,
        words(context, label),
        unit ?? (own.label.includes('percent') ? PERCENT : undefined),
        depth + 1,
        false,
      );
    return;
  }
  // A rating: its value on its own scale, and how many people rated.
  if ('ratingValue' in o) {
    const value = toNumber(o.ratingValue);
    const best = toNumber(o.bestRating) ?? 5; // schema.org's default scale is 1-5
    const ratingName = typeof o.name === 'string' ? keyWords(o.name, false) : '';
    if (value !== undefined)
      push(w, {
        path,
        label,
        context: words(context, ratingName),
        kind: 'number',
        num: value,
        unit: `/${best}`,
        dimension: 'rating',
      });
    for (const k of ['ratingCount', 'reviewCount']) {
      const n = toNumber(o[k]);
      if (n !== undefined)
        push(w, {
          path: join(path, k),
          label: keyWords(k),
          context: words(context, label),
          kind: 'number',
          num: n,
          dimension: 'count',
        });
    }
    return;
  }
  // A quantity: a number with its unit.
  if ('value' in o || 'minValue' in o || 'maxValue' in o) {
    const unit = declaredUnit(o) ?? keyUnit;
    const v = toNumber(o.value) ?? toNumber(o.minValue) ?? toNumber(o.maxValue);
    if (v !== undefined) push(w, numberFact(path, label, context, v, unit));
    else if (typeof o.value === 'string') walkValue(w, o.value, path, label, context, unit, depth + 1, false);
    else if (isRecord(o.value) && unit?.dimension === 'money') {
      // a MonetaryAmount's QuantitativeValue: its number is in the amount's currency, and its
      // unitText ("YEAR", "HOUR") is the period the amount is paid per, not a unit of it
      const inner = o.value;
      const n = toNumber(inner.value) ?? toNumber(inner.minValue) ?? toNumber(inner.maxValue);
      if (n !== undefined) push(w, numberFact(path, label, context, n, unit));
    } else if (isRecord(o.value)) walkObject(w, o.value, path, label, context, unit, depth + 1);
    return;
  }
  // An entity: its name is the value; its other simple fields are facts of their own.
  if (typeof o.name === 'string' && o.name.trim()) {
    // a Country or a Language named by its code ({"@type": "Country", "name": "FR"}): its name
    const name = o.name.trim();
    const kind = type === 'Country' ? 'country' : type === 'Language' ? 'language' : label;
    push(w, { path, label, context, kind: 'string', str: codeName(name, kind) ?? name.slice(0, 300) });
  }
  const currency = currencyOf(o, 'priceCurrency');
  for (const [k, v] of Object.entries(o)) {
    if (SKIP_KEYS.has(k) || k === 'name' || k.startsWith('@')) continue;
    const own = keyLabel(k);
    const unit = keyUnitIn(k, own.unit, currency);
    walkValue(w, v, join(path, k), own.label, words(context, label), unit, depth + 1, TEXT_KEYS.has(k));
  }
}

/**
 * Every fact of a schema.org object, in document order (bounded: a hostile object costs
 * bounded time). Top-level names are `name` facts; prose is `text`; the rest as above.
 */
export function extractFacts(schema: Record<string, unknown>): Fact[] {
  const w: Walk = { out: [] };
  const currency = currencyOf(schema, 'priceCurrency');
  for (const [key, value] of Object.entries(schema)) {
    if (SKIP_KEYS.has(key) || key.startsWith('@')) continue;
    const { label, unit: own } = keyLabel(key);
    const unit = keyUnitIn(key, own, currency);
    if (NAME_KEYS.has(key)) {
      for (const v of Array.isArray(value) ? value : [value])
        if (typeof v === 'string' && v.trim())
          push(w, { path: key, label, context: '', kind: 'name', str: v.trim() });
      continue;
    }
    walkValue(w, value, key, label, '', unit, 1, TEXT_KEYS.has(key));
  }
  return w.out;
}

/** Facts grouped by path (an item can hold several values of one property: genres, actors). */
export function factsByPath(facts: readonly Fact[]): Map<string, Fact[]> {
  const out = new Map<string, Fact[]>();
  for (const f of facts) {
    const list = out.get(f.path);
    if (list) list.push(f);
    else out.set(f.path, [f]);
  }
  return out;
}

/** The first date fact of an item's main date properties, as a year (for "Titanic (1997)"). */
export function itemYear(facts: readonly Fact[], datePaths?: readonly string[]): number | undefined {
  const dates = facts.filter((f) => f.kind === 'date' && f.num !== undefined);
  if (datePaths) {
    for (const p of datePaths) {
      const hit = dates.find((f) => f.path === p);
      if (hit) return Math.floor(hit.num!);
    }
  }
  return dates[0] ? Math.floor(dates[0].num!) : undefined;
}

export { canonicalUnit };

/** Facts as a small JSON object (path → numbers or strings), for a database column. */
export function compactFacts(facts: readonly Fact[]): Record<string, Array<number | string>> {
  // no prototype: a path may be "constructor" (a CSV column), which `{}` already answers to
  const out = Object.create(null) as Record<string, Array<number | string>>;
  for (const f of facts) {
    if (f.kind === 'text') continue;
    const v = f.num ?? f.str;
    if (v === undefined) continue;
    (out[f.path] ??= []).push(v);
  }
  return out;
}

/** The facts of `compactFacts` back as a map by path (numbers and strings only). */
export function factsFromCompact(
  compact: Readonly<Record<string, readonly (number | string)[]>>,
): Map<string, Fact[]> {
  const out = new Map<string, Fact[]>();
  for (const [path, values] of Object.entries(compact)) {
    out.set(
      path,
      values.map((v) =>
        typeof v === 'number'
          ? { path, label: '', context: '', kind: 'number' as const, num: v }
          : { path, label: '', context: '', kind: 'string' as const, str: v },
      ),
    );
  }
  return out;
}
