import * as chrono from 'chrono-node';
import type {
  Constraint,
  NameMatch,
  NamedItem,
  Order,
  RangeConstraint,
  Target,
  Understanding,
  ValueConstraint,
} from '@askbus/contracts';
import { STOPWORDS } from '@askbus/search-core';
import type { PropertyModel, SiteModel } from './model';
import { nameKey } from './names';
import { tagQuestion, type NumberSpan, type Token } from './tokens';
import { PHRASES } from './describe';
import { formatNumber, formatRangeText, formatYears, isYearValued, shownLabel } from './format';
import { MAX_UNIT_WORDS, toCanonical, unitOf, type Unit } from './units';

/**
 * Turns a question into structure against a site's profile (its SiteModel): free words,
 * constraints (ranges with units, dates and decades, enumeration values, derived quantities),
 * orders (superlatives, preferences), named items, and what it asks for (a list, one item's
 * details, two items compared). Pure: the profile, the name matches and WordNet come in.
 */
export interface ParseInput {
  model: SiteModel;
  /** Stretches of the question that are item names (the retriever's name index). */
  names?: readonly NameMatch[];
  /** "Now", for relative dates ("last year"). */
  now?: Date;
}

type Use = 'name' | 'time' | 'number' | 'order' | 'value' | 'type' | 'site' | 'frame' | 'derived' | 'attr';

/** Words that ask for a comparison of two named things. */
const COMPARE_CUES =
  /\b(compare[ds]?|comparison|comparing|vs|versus|difference|differences|differ|between)\b/;
/** Words that ask about one thing. */
const DETAIL_CUES =
  /\b(who|what|whats|when|where|which|how|tell|describe|details?|info|information|about|know|is|was|does|did)\b/;
/** Words after "like" / "similar to" make a named item an example, not the subject. */
const EXAMPLE_CUES = /\b(like|similar|such as|resembling)\b/;

interface Ctx {
  text: string;
  tokens: Token[];
  numbers: NumberSpan[];
  used: (Use | undefined)[];
  model: SiteModel;
  constraints: Constraint[];
  orders: Order[];
  asked: Set<string>;
  types: Set<string>;
  nouns: string[];
}

const words = (c: Ctx, from: number, to: number): string =>
  c.tokens
    .slice(from, to)
    .map((t) => t.word)
    .join(' ');
const phraseOf = (c: Ctx, from: number, to: number): string =>
  from < to ? c.text.slice(c.tokens[from]!.start, c.tokens[to - 1]!.end) : '';
const mark = (c: Ctx, from: number, to: number, use: Use): void => {
  for (let i = from; i < to; i++) c.used[i] ??= use;
};
const free = (c: Ctx, i: number): boolean => i >= 0 && i < c.tokens.length && c.used[i] === undefined;
const isNumberToken = (c: Ctx, i: number): boolean => c.numbers.some((n) => i >= n.from && i < n.to);

/** Parses one question. */
export function parseQuestion(text: string, input: ParseInput): Understanding {
  const { model } = input;
  const tagged = tagQuestion(text.slice(0, 2_000));
  const c: Ctx = {
    text: tagged.text,
    tokens: tagged.tokens,
    numbers: tagged.numbers,
    used: tagged.tokens.map(() => undefined),
    model,
    constraints: [],
    orders: [],
    asked: new Set(),
    types: new Set(),
    nouns: [],
  };
  const named = findNamed(c, input.names ?? []);
  const intent = intentOf(c, named);
  if (intent.kind === 'search') {
    readDates(c, input.now ?? new Date());
    // values written with numbers ("PG-13", "Apollo 13") before numbers are read as quantities
    readValues(c, true);
    readQuantities(c);
    readNone(c);
    readOrders(c);
    readDerived(c);
    readPreferences(c, 'noun');
    readValues(c);
    readYesNo(c);
    readNoneOf(c);
    readPreferences(c, 'alone');
  } else {
    readAttributes(c, intent.kind);
  }
  readTypes(c);
  const left = c.tokens.filter(
    (t, i) => free(c, i) && !STOPWORDS.has(t.word) && !isNumberToken(c, i) && !FRAME_WORDS.has(t.word),
  );
  // verbs that are only verbs ("became", "make") say little about the items; a question's first
  // word is read as a command by the tagger ("nurse jobs"), so there a noun WordNet knows stays
  const content = left.filter(
    (t) =>
      !(t.tags.has('Verb') && !t.tags.has('Noun') && !t.tags.has('Adjective')) ||
      (t === c.tokens[0] && model.lexicon.senses(t.word, 'n').length > 0),
  );
  const freeText = content.map((t) => t.raw).join(' ');
  for (const k of c.constraints)
    for (const p of targetPaths(k.kind === 'range' ? k.target : { path: k.path })) c.asked.add(p);
  for (const o of c.orders) for (const p of targetPaths(o.target)) c.asked.add(p);
  return {
    text,
    freeText,
    types: [...c.types],
    constraints: c.constraints,
    orders: c.orders,
    named: intent.named,
    intent: intent.kind,
    asked: [...c.asked],
    noun: c.nouns[0] ?? pluralNoun(model),
    source: 'local',
  };
}

/** The site's main type as a plural noun: Movie → "movies", MusicRecording → "music recordings". */
function pluralNoun(model: SiteModel): string {
  const type = [...model.types].sort((a, b) => b.count - a.count)[0]?.type;
  if (!type) return 'items';
  const words = type.replace(/([a-z\d])([A-Z])/g, '$1 $2').toLowerCase();
  return /(s|x|ch|sh)$/.test(words)
    ? `${words}es`
    : /[^aeiou]y$/.test(words)
      ? `${words.slice(0, -1)}ies`
      : `${words}s`;
}

export function targetPaths(t: Target): string[] {
  return 'path' in t ? [t.path] : [t.derived.a, t.derived.b];
}

// ---------------------------------------------------------------- named items

/** Words that frame a request rather than say what is wanted. */
const FRAME_WORDS = new Set(
  'tell me about details detail describe info information know show find give list what who whom whose when where which how is was are were does did do the a an of for please can you i want to get see compare comparison vs versus between difference differences and or than better worse'.split(
    ' ',
  ),
);

interface NamedSpan {
  from: number;
  to: number;
  item: NamedItem;
  common: boolean;
}

/** The name matches worth believing, with the item each most likely means. */
function findNamed(c: Ctx, names: readonly NameMatch[]): NamedSpan[] {
  const spans: NamedSpan[] = [];
  const lower = c.text.toLowerCase();
  const contentCount = c.tokens.filter((t) => !STOPWORDS.has(t.word) && !FRAME_WORDS.has(t.word)).length;
  for (const m of names) {
    const covered = c.tokens.filter((t) => t.start >= m.start && t.end <= m.end);
    if (covered.length === 0 || m.items.length === 0) continue;
    const from = covered[0]!.i;
    const to = covered.at(-1)!.i + 1;
    // words that only begin longer names but are a value of the site ("FC Bayern München" begins
    // "FC Bayern München vs …" and is a home team): the value reading wins
    if (!m.exact && c.model.values.has(covered.map((t) => t.word).join(' '))) continue;
    const content = covered.filter((t) => !STOPWORDS.has(t.word));
    const common = m.common || (content.length === 1 && c.model.lexicon.isCommon(content[0]!.word));
    const whole = content.length > 0 && content.length >= contentCount - 1;
    const capitalized = covered.filter((t) => !STOPWORDS.has(t.word)).every((t) => t.capitalized);
    const quoted =
      /["“'‘]$/.test(c.text.slice(0, m.start).trimEnd()) && /^["”'’]/.test(c.text.slice(m.end).trimStart());
    // a year right after the name picks among items of that name ("Titanic (1997)", "the 1982 civic")
    const yearToken = [c.tokens[to], c.tokens[from - 1]].find((t) => t && /^\d{4}$/.test(t.word));
    const year = yearToken ? Number(yearToken.word) : undefined;
    const pool =
      year !== undefined && m.items.some((x) => x.year === year)
        ? m.items.filter((x) => x.year === year)
        : m.items;
    const trusted =
      (!common && (m.exact ? content.length >= 1 : covered.length >= 2)) || capitalized || quoted || whole;
    if (!trusted && !(common && m.exact)) continue;
    const best = pool[0]!;
    spans.push({
      from,
      to,
      common: !trusted,
      item: {
        phrase: c.text.slice(m.start, m.end),
        url: best.url,
        name: best.name,
        site: best.site,
        type: best.type,
        exact: m.exact,
      },
    });
    if (yearToken && pool !== m.items) mark(c, yearToken.i, yearToken.i + 1, 'name');
  }
  void lower;
  return spans;
}

interface Intent {
  kind: 'search' | 'details' | 'compare';
  named: NamedItem[];
}

/** Whether the question compares two named items, asks about one, or searches. */
function intentOf(c: Ctx, spans: NamedSpan[]): Intent {
  const lower = c.text.toLowerCase();
  const trusted = spans.filter((s) => !s.common);
  const distinct = (list: NamedSpan[]): NamedSpan[] =>
    list.filter((s, i) => list.findIndex((x) => x.item.url === s.item.url) === i);
  const comparative = c.tokens.some(
    (t) => c.model.lexicon.degree(t.word)?.degree === 'comparative' || t.tags.has('Comparative'),
  );
  const compareCue =
    COMPARE_CUES.test(lower) ||
    (/\b(or|than|and)\b/.test(lower) && (comparative || /\b(which|better|worse|more|less)\b/.test(lower)));
  // two names with a comparison: common one-word names count here ("heat vs casino"), after the sure ones
  const both = distinct(compareCue ? [...trusted, ...spans.filter((s) => s.common)] : trusted);
  if (both.length >= 2 && compareCue) {
    const pair = both.slice(0, 2);
    for (const s of pair) mark(c, s.from, s.to, 'name');
    return { kind: 'compare', named: pair.map((s) => s.item) };
  }
  const one = distinct(trusted);
  const candidates = one.length ? one : distinct(spans.filter((s) => s.item.exact));
  if (candidates.length === 1) {
    const s = candidates[0]!;
    const rest = c.tokens.filter((t) => t.i < s.from || t.i >= s.to);
    const restText = rest.map((t) => t.word).join(' ');
    const possessive = /['’]s\b/.test(c.text.slice(c.tokens[s.to - 1]!.end, c.tokens[s.to - 1]!.end + 2));
    const example = EXAMPLE_CUES.test(restText);
    const asks =
      DETAIL_CUES.test(restText) ||
      possessive ||
      /\bof$/.test(
        c.tokens
          .slice(0, s.from)
          .map((t) => t.word)
          .join(' '),
      );
    if (
      !example &&
      rest.length > 0 &&
      asks &&
      (s.common === false || c.tokens[s.from]!.capitalized || asks)
    ) {
      // an attribute or a whole-item question about one item
      const otherContent = rest.filter((t) => !STOPWORDS.has(t.word) && !FRAME_WORDS.has(t.word));
      const lookLikeSearch = otherContent.some(
        (t) => c.model.typeOf(t.word) && /^(which|what)$/.test(c.tokens[0]?.word ?? '') && !possessive,
      );
      if (!lookLikeSearch && !s.common) {
        mark(c, s.from, s.to, 'name');
        return { kind: 'details', named: [s.item] };
      }
    }
    if (!s.common) {
      mark(c, s.from, s.to, 'name');
      return { kind: 'search', named: [s.item] };
    }
  }
  // several names in a search: keep them as hints (the retriever puts them first)
  const hints = distinct(trusted).slice(0, 5);
  for (const s of hints) mark(c, s.from, s.to, 'name');
  return { kind: 'search', named: hints.map((s) => s.item) };
}

/** The properties a details or compare question asks about ("who directed" → director, "longer" → duration). */
function readAttributes(c: Ctx, kind: 'details' | 'compare'): void {
  for (let i = 0; i < c.tokens.length; i++) {
    if (!free(c, i)) continue;
    const t = c.tokens[i]!;
    if (STOPWORDS.has(t.word) && !/^(more|most|less|least)$/.test(t.word)) continue;
    if (
      /^(tell|describe|details?|info|information|know|compare|comparison|vs|versus|difference|differences|better|worse|which|who|what|when|where|how)$/.test(
        t.word,
      )
    ) {
      if (t.word === 'who' || t.word === 'when' || t.word === 'where') continue;
      if (t.word !== 'better' && t.word !== 'worse') continue;
    }
    const degree = c.model.lexicon.degree(t.word);
    const base = degree?.base ?? t.root;
    // "which has more RAM", "fewer pages": the amount of what the next word names
    if (kind === 'compare' && /^(more|less|fewer)$/.test(t.word)) {
      const next = c.tokens[i + 1];
      const r = next && free(c, i + 1) ? resolveNumeric(c, i + 1) : undefined;
      if (r?.prop && r.score >= 0.55) {
        c.asked.add(r.prop.path);
        sortOn(c, r.prop, (t.word === 'more') !== !!r.inverse ? 'desc' : 'asc', `${t.raw} ${next!.raw}`);
        mark(c, i, i + 2, 'attr');
        i++;
      }
      continue;
    }
    if (base === 'good' || base === 'bad') {
      // "better rated", "which is better": the rating, unless the next word names another property
      const next = c.tokens[i + 1];
      const hit = next ? c.model.resolve(next.word, { roots: [next.root] })[0] : undefined;
      const prop = hit && hit.score >= 0.6 ? hit.prop : c.model.rating;
      if (prop) {
        c.asked.add(prop.path);
        mark(c, i, hit && hit.score >= 0.6 ? i + 2 : i + 1, 'attr');
      }
      continue;
    }
    const hits = c.model.resolve(t.word, { roots: [t.root, base].filter((x) => x && x !== t.word) });
    // "gross" alone means the whole, not a part: among alike readings the larger measure
    const hit = hits
      .filter(
        (h) =>
          hits[0] &&
          h.score >= hits[0].score - 0.03 &&
          h.prop.head === hits[0].prop.head &&
          h.prop.unit === hits[0].prop.unit,
      )
      .sort((a, b) => (b.prop.max ?? 0) - (a.prop.max ?? 0))[0];
    const comparative = kind === 'compare' && (degree?.degree === 'comparative' || t.tags.has('Comparative'));
    // "which is heavier": the side with more of it wins; "cheaper", "lighter": the side with less
    const wins = (prop: PropertyModel, inverse = false): void => {
      if (comparative)
        sortOn(c, prop, c.model.lexicon.polarity(base) > 0 !== inverse ? 'desc' : 'asc', t.raw);
    };
    if (hit && hit.score >= 0.55) {
      c.asked.add(hit.prop.path);
      wins(hit.prop);
      mark(c, i, i + 1, 'attr');
      continue;
    }
    if (t.word === 'when' || t.word === 'year') {
      if (c.model.primaryDate) c.asked.add(c.model.primaryDate.path);
      continue;
    }
    // as in a search: "cheaper" is the cost ("$$"), "longer" a book's pages
    const named = resolveNumeric(c, i);
    const r = named && named.score >= 0.55 ? named : degree ? extentByCount(c, base, i, i + 1) : undefined;
    if (r?.prop) {
      c.asked.add(r.prop.path);
      wins(r.prop, r.inverse);
      mark(c, i, i + 1, 'attr');
    }
  }
  const lower = c.text.toLowerCase();
  if (/\bwhen\b|\bwhat year\b/.test(lower) && c.model.primaryDate) c.asked.add(c.model.primaryDate.path);
}

/** The side a comparison's word prefers on a property, as a sort ("heavier", "more RAM"). */
function sortOn(c: Ctx, prop: PropertyModel, direction: 'asc' | 'desc', phrase: string): void {
  c.orders.push({
    target: { path: prop.path },
    direction,
    strength: 'sort',
    phrase,
    text: orderText(shownLabel(prop.label), prop.kind === 'date', direction, 'sort'),
  });
}

// ---------------------------------------------------------------- time

const DECADE_WORDS = new Map<string, number>(
  Object.entries({
    tens: 10,
    twenties: 20,
    thirties: 30,
    forties: 40,
    fifties: 50,
    sixties: 60,
    seventies: 70,
    eighties: 80,
    nineties: 90,
  }),
);
const PART_OF_DECADE = new Map<string, [number, number]>(
  Object.entries({
    early: [0, 4],
    mid: [3, 7],
    middle: [3, 7],
    late: [6, 10],
  }),
);

/** Years on a date property: decades ("the 90s", "early seventies"), years, months, and bounds ("1980 or later"). */
function readDates(c: Ctx, now: Date): void {
  const date = c.model.primaryDate;
  if (!date) return;
  const lo = Math.floor(date.min ?? 1000);
  const hi = Math.floor(date.max ?? 2999);
  const century = (yy: number): number => {
    // the century whose decade the site's dates cover most
    const candidates = [1900 + yy, 2000 + yy, 1800 + yy];
    return candidates.find((y) => y + 9 >= lo && y <= hi) ?? 1900 + yy;
  };
  const add = (
    from: number,
    to: number,
    min: number | undefined,
    max: number | undefined,
    textOf: string,
    confidence = 0.9,
  ): void => {
    const k: RangeConstraint = {
      kind: 'range',
      target: { path: date.path },
      ...(min !== undefined ? { min } : {}),
      ...(max !== undefined ? { max } : {}),
      minInclusive: true,
      maxInclusive: false,
      phrase: phraseOf(c, from, to),
      text: textOf,
      confidence,
    };
    c.constraints.push(k);
    mark(c, from, to, 'time');
  };
  const dateWord = 'from';
  for (let i = 0; i < c.tokens.length; i++) {
    if (!free(c, i)) continue;
    const w = c.tokens[i]!.word;
    const dm = /^(\d{2}|\d{4})s$/.exec(w);
    const decadeStart = dm
      ? dm[1]!.length === 2
        ? century(Number(dm[1]))
        : Number(dm[1])
      : DECADE_WORDS.has(w)
        ? century(DECADE_WORDS.get(w)!)
        : undefined;
    if (decadeStart !== undefined && decadeStart % 10 === 0) {
      let from = i;
      let [a, b] = [0, 10];
      const prev = c.tokens[i - 1]?.word;
      const part = prev ? PART_OF_DECADE.get(prev) : undefined;
      if (part && free(c, i - 1)) {
        [a, b] = part;
        from = i - 1;
      }
      if (c.tokens[from - 1]?.word === 'the' && free(c, from - 1)) from--;
      const start = decadeStart + a;
      const end = decadeStart + b;
      add(from, i + 1, start, end, `${dateWord} ${b - a === 10 ? 'the ' : ''}${formatYears(start, end - 1)}`);
      continue;
    }
    // a year, with the words that bound it
    if (!/^\d{4}$/.test(w)) continue;
    const year = Number(w);
    if (year < lo - 30 || year > hi + 30 || year < 1000 || year > 2999) continue;
    const before = (k: number): string => c.tokens[i - k]?.word ?? '';
    const after = (k: number): string => c.tokens[i + k]?.word ?? '';
    // a whole date ("December 12, 2026", "12 December 2026"): chrono reads it below
    if (
      (/^\d{1,2}(st|nd|rd|th)?$/.test(before(1)) && MONTHS.has(before(2))) ||
      (MONTHS.has(before(1)) && /^\d{1,2}(st|nd|rd|th)?$/.test(before(2)))
    )
      continue;
    // a quantity, not a year: "2000 square feet", "between 2000 and 3000 square feet"
    if (measured(c, i) || (/^(and|to|through)$/.test(after(1)) && measured(c, i + 2))) continue;
    // "between 1990 and 1995", "from 1990 to 1995", "1990-1995"
    const second =
      /^(and|to|through|until|till)$/.test(after(1)) && /^\d{4}$/.test(after(2))
        ? Number(after(2))
        : /^\d{4}$/.test(after(1)) &&
            c.text.slice(c.tokens[i]!.end, c.tokens[i + 1]?.start ?? 0).includes('-')
          ? Number(after(1))
          : undefined;
    if (second !== undefined && second > year && second <= 2999) {
      const from = /^(between|from)$/.test(before(1)) ? i - 1 : i;
      const to = /^\d{4}$/.test(after(1)) ? i + 2 : i + 3;
      add(from, to, year, second + 1, `${dateWord} ${formatYears(year, second)}`);
      continue;
    }
    if (/^(or|and)$/.test(after(1)) && /^(later|after|newer|more|since|beyond|up|onwards?)$/.test(after(2))) {
      add(/^(from|since|in)$/.test(before(1)) ? i - 1 : i, i + 3, year, undefined, `from ${year} or later`);
      continue;
    }
    if (/^(or|and)$/.test(after(1)) && /^(earlier|before|older|sooner)$/.test(after(2))) {
      add(/^(from|in)$/.test(before(1)) ? i - 1 : i, i + 3, undefined, year + 1, `from ${year} or earlier`);
      continue;
    }
    if (/^(on|onwards?|forward)$/.test(after(1)) && /^(from|since)$/.test(before(1))) {
      add(i - 1, i + 2, year, undefined, `from ${year} or later`);
      continue;
    }
    if (
      /^(since|after)$/.test(before(1)) ||
      (before(1) === 'later' && before(2) === '') ||
      (before(2) === 'later' && before(1) === 'than') ||
      (before(2) === 'newer' && before(1) === 'than')
    ) {
      const inclusive = before(1) === 'since';
      add(
        before(1) === 'than' ? i - 2 : i - 1,
        i + 1,
        inclusive ? year : year + 1,
        undefined,
        inclusive ? `from ${year} or later` : `after ${year}`,
      );
      continue;
    }
    if (
      /^(before|until|till|prior)$/.test(before(1)) ||
      (before(1) === 'to' && before(2) === 'prior') ||
      (before(1) === 'than' && /^(earlier|older)$/.test(before(2)))
    ) {
      const from = before(1) === 'to' || before(1) === 'than' ? i - 2 : i - 1;
      const inclusive = /^(until|till)$/.test(before(1));
      add(
        from,
        i + 1,
        undefined,
        inclusive ? year + 1 : year,
        inclusive ? `from ${year} or earlier` : `before ${year}`,
      );
      continue;
    }
    // "in 1997", "from 1997", "1997 movies": that year (a month before it narrows it)
    const month = MONTHS.get(before(1));
    if (month !== undefined && free(c, i - 1)) {
      const start = monthStart(year, month);
      add(
        /^(in|from|during)$/.test(before(2)) ? i - 2 : i - 1,
        i + 1,
        start,
        monthStart(year, month + 1),
        `${dateWord} ${c.tokens[i - 1]!.raw} ${year}`,
      );
      continue;
    }
    add(
      /^(in|from|during|of)$/.test(before(1)) ? i - 1 : i,
      i + 1,
      year,
      year + 1,
      `${dateWord} ${year}`,
      0.85,
    );
  }
  readWeekend(c, now, add);
  const nowAt = atMs(now.getTime());
  // other dates chrono reads ("June 5, 2014", "last year"); a month and day alone when the
  // site's dates all fall in one year
  for (const r of chrono.parse(c.text, now)) {
    const from = c.tokens.findIndex((t) => t.start >= r.index);
    const to = c.tokens.findIndex((t) => t.start >= r.index + r.text.length);
    const end = to < 0 ? c.tokens.length : to;
    if (from < 0 || from >= end) continue;
    if (c.used.slice(from, end).some((u) => u !== undefined)) continue;
    const known = (k: 'year' | 'month' | 'day'): number | undefined =>
      r.start.isCertain(k) ? (r.start.get(k) ?? undefined) : undefined;
    // "the last 10 years", "the past 3 months": from that long ago until now
    if (/\b(last|past|previous)\s+\S+\s+(years?|months?|weeks?|days?)\b/i.test(r.text)) {
      add(
        from,
        end,
        atMs(r.start.date().getTime()),
        nowAt,
        r.text.trim().replace(/^(in|from|during)\s+/i, ''),
      );
      continue;
    }
    const year = known('year') ?? (lo === hi ? lo : undefined);
    const monthOf = known('month');
    const dayOf = known('day');
    if (year !== undefined && monthOf === undefined && known('year') !== undefined) {
      // "the past year": the twelve months to now; "last year", "this year": that calendar year
      if (/\bpast\b/i.test(r.text)) add(from, end, nowAt - 1, nowAt, `${dateWord} the past year`);
      else add(from, end, year, year + 1, `${dateWord} ${year}`);
      continue;
    }
    // a month alone ("in January"): the one nearest to now among the years the site's dates reach
    const yearOf = year ?? (monthOf !== undefined ? nearestYearOf(monthOf, now, lo, hi) : undefined);
    if (yearOf === undefined || monthOf === undefined) continue;
    // "next week", "this week": chrono gives one day of it; the week is Monday to Sunday
    if (dayOf !== undefined && /\bweek\b/i.test(r.text)) {
      const day = Date.UTC(yearOf, monthOf - 1, dayOf);
      const monday = day - ((new Date(day).getUTCDay() + 6) % 7) * DAY_MS;
      add(from, end, atMs(monday), atMs(monday + 7 * DAY_MS), r.text.toLowerCase());
      continue;
    }
    const start = dayOf !== undefined ? dayStart(yearOf, monthOf, dayOf) : monthStart(yearOf, monthOf);
    const stop = dayOf !== undefined ? dayStart(yearOf, monthOf, dayOf + 1) : monthStart(yearOf, monthOf + 1);
    add(
      from,
      end,
      start,
      stop,
      dateText(r.text, year === undefined ? yearOf : undefined, dayOf !== undefined),
    );
  }
}

const MONTHS = new Map<string, number>(
  Object.entries({
    january: 1,
    jan: 1,
    february: 2,
    feb: 2,
    march: 3,
    mar: 3,
    april: 4,
    apr: 4,
    may: 5,
    june: 6,
    jun: 6,
    july: 7,
    jul: 7,
    august: 8,
    aug: 8,
    september: 9,
    sep: 9,
    sept: 9,
    october: 10,
    oct: 10,
    november: 11,
    nov: 11,
    december: 12,
    dec: 12,
  }),
);

const yearFraction = (year: number, ms: number): number => {
  const start = Date.UTC(year, 0, 1);
  const end = Date.UTC(year + 1, 0, 1);
  return year + (ms - start) / (end - start);
};
const monthStart = (year: number, month: number): number =>
  month > 12 ? year + 1 : yearFraction(year, Date.UTC(year, month - 1, 1));
const dayStart = (year: number, month: number, day: number): number =>
  yearFraction(year, Date.UTC(year, month - 1, day));
const DAY_MS = 86_400_000;

/** How a date chrono read is said: "tomorrow", "next week", "on December 12, 2026", "in January 2027". */
function dateText(written: string, impliedYear: number | undefined, day: boolean): string {
  written = written.trim().replace(/^(on|in|from|during|at)\s+/i, '');
  if (/^(today|tonight|tomorrow|yesterday)$|^(this|next|last|past|coming)\b/i.test(written))
    return written.toLowerCase();
  const at = day ? 'on' : 'in';
  return impliedYear === undefined ? `${at} ${written}` : `${at} ${written}${day ? ',' : ''} ${impliedYear}`;
}

/** The year whose `month` lies nearest to `now`, of last year, this year and next within lo..hi. */
function nearestYearOf(month: number, now: Date, lo: number, hi: number): number | undefined {
  const y = now.getUTCFullYear();
  const middle = (year: number): number => Date.UTC(year, month - 1, 15);
  return [y - 1, y, y + 1]
    .filter((year) => year >= lo && year <= hi)
    .sort((a, b) => Math.abs(middle(a) - now.getTime()) - Math.abs(middle(b) - now.getTime()))[0];
}
/** A moment (ms since the epoch) as a fractional year. */
const atMs = (ms: number): number => yearFraction(new Date(ms).getUTCFullYear(), ms);

/**
 * "this weekend", "next weekend", "last weekend", "the weekend": Saturday and Sunday (the
 * calendar's, not a site's); "this" is the coming one, or the one under way.
 */
function readWeekend(
  c: Ctx,
  now: Date,
  add: (from: number, to: number, min: number, max: number, text: string) => void,
): void {
  const at = c.tokens.findIndex((t, i) => (t.word === 'weekend' || t.word === 'weekends') && free(c, i));
  if (at < 0) return;
  const before = c.tokens[at - 1]?.word ?? '';
  const which = /^(this|next|last|coming|the|upcoming|past)$/.test(before) && free(c, at - 1) ? before : '';
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const weekday = new Date(today).getUTCDay();
  // Saturday of this weekend: today on a Saturday, yesterday on a Sunday
  let saturday = today + (weekday === 0 ? -1 : 6 - weekday) * DAY_MS;
  if (which === 'next') saturday += 7 * DAY_MS;
  if (which === 'last' || which === 'past') saturday -= 7 * DAY_MS;
  const from = which ? at - 1 : at;
  add(
    from,
    at + 1,
    atMs(saturday),
    atMs(saturday + 2 * DAY_MS),
    `${which && which !== 'the' ? which : 'this'} weekend`,
  );
}

// ---------------------------------------------------------------- numbers

type Comparator = 'gt' | 'gte' | 'lt' | 'lte' | 'eq' | 'about';

/** Comparators before a number, longest first: the words and what they mean. */
const COMPARATORS: [string, Comparator][] = [
  ['no more than', 'lte'],
  ['no less than', 'gte'],
  ['not more than', 'lte'],
  ['not less than', 'gte'],
  ['more than', 'gt'],
  ['greater than', 'gt'],
  ['higher than', 'gt'],
  ['bigger than', 'gt'],
  ['larger than', 'gt'],
  ['less than', 'lt'],
  ['fewer than', 'lt'],
  ['lower than', 'lt'],
  ['smaller than', 'lt'],
  ['at least', 'gte'],
  ['at most', 'lte'],
  ['upwards of', 'gt'],
  ['in excess of', 'gt'],
  ['up to', 'lte'],
  ['a minimum of', 'gte'],
  ['a maximum of', 'lte'],
  ['over', 'gt'],
  ['above', 'gt'],
  ['exceeding', 'gt'],
  ['exceeds', 'gt'],
  ['under', 'lt'],
  ['below', 'lt'],
  ['beneath', 'lt'],
  ['within', 'lte'],
  ['exactly', 'eq'],
  ['precisely', 'eq'],
  ['about', 'about'],
  ['around', 'about'],
  ['approximately', 'about'],
  ['roughly', 'about'],
  ['nearly', 'about'],
  ['almost', 'about'],
];
const AFTER_COMPARATORS: [string, Comparator][] = [
  ['or more', 'gte'],
  ['or higher', 'gte'],
  ['or above', 'gte'],
  ['or greater', 'gte'],
  ['or over', 'gte'],
  ['and up', 'gte'],
  ['and above', 'gte'],
  ['and over', 'gte'],
  ['plus', 'gte'],
  ['or better', 'gte'],
  ['or less', 'lte'],
  ['or fewer', 'lte'],
  ['or lower', 'lte'],
  ['or under', 'lte'],
  ['or below', 'lte'],
  ['and under', 'lte'],
  ['and below', 'lte'],
];

/** The comparator written just before token `i`, and where it starts. */
function comparatorBefore(c: Ctx, i: number): { op: Comparator; from: number } | undefined {
  for (const [phrase, op] of COMPARATORS) {
    const n = phrase.split(' ').length;
    if (i - n < 0) continue;
    if (words(c, i - n, i) === phrase) return { op, from: i - n };
    // "more than a billion": an article between
    if (i - n - 1 >= 0 && /^(a|an)$/.test(c.tokens[i - 1]!.word) && words(c, i - n - 1, i - 1) === phrase)
      return { op, from: i - n - 1 };
  }
  return undefined;
}

function comparatorAfter(c: Ctx, i: number): { op: Comparator; to: number } | undefined {
  for (const [phrase, op] of AFTER_COMPARATORS) {
    const n = phrase.split(' ').length;
    // "8 cylinders and over 150 hp": that "over" is the next number's
    if (words(c, i, i + n) === phrase && !c.numbers.some((m) => m.from === i + n)) return { op, to: i + n };
  }
  if (c.text.slice(c.tokens[i - 1]?.end ?? 0, (c.tokens[i - 1]?.end ?? 0) + 1) === '+')
    return { op: 'gte', to: i };
  return undefined;
}

/**
 * The site's cost, when a number written with a scale ("30k", "1.5 million") and no unit lies in
 * its range: people leave the currency out of prices, not of other quantities.
 */
function scaledAmountOf(c: Ctx, n: NumberSpan): PropertyModel | undefined {
  if (!/\d\s*(k|m|mm|mn|b|bn|thousand|million|billion)\b/i.test(n.text)) return undefined;
  const cost = c.model.properties
    .filter((p) => p.kind === 'number' && p.role === 'cost' && p.dimension === 'money')
    .sort((a, b) => b.count - a.count)[0];
  return cost && n.value >= (cost.min ?? 0) && n.value <= (cost.max ?? Infinity) ? cost : undefined;
}

/** Whether a number lies an order of magnitude beyond every value the property has. */
const farOutside = (p: PropertyModel, v: number): boolean =>
  p.max !== undefined &&
  p.min !== undefined &&
  (v > Math.abs(p.max) * 10 || v < p.min - 10 * Math.abs(p.max - p.min));

/** The site's most common year-valued property whose years come near a number (within 50 years). */
function yearPropertyOf(c: Ctx, v: number): PropertyModel | undefined {
  return c.model.properties
    .filter((p) => isYearValued(p) && p.min !== undefined && p.max !== undefined)
    .filter((p) => v >= p.min! - 50 && v <= p.max! + 50)
    .sort((a, b) => b.count - a.count)[0];
}

/** Prepositions of time before a year, as comparators. */
const YEAR_PREPOSITIONS = new Map<string, Comparator>([
  ['before', 'lt'],
  ['until', 'lte'],
  ['after', 'gt'],
  ['since', 'gte'],
]);

/** Whether a noun names people ("people", "guests", "adults", "kids"). */
const namesPeople = (c: Ctx, word: string): boolean =>
  c.model.lexicon.isKindOf(word, 'person') || c.model.lexicon.isKindOf(word, 'people');

/**
 * A number of people after a number ("recipes for 6 people", "rooms for 4 guests"): the site's
 * count written with a word that names people ("4 persons"), else its one count written with a
 * word of its own ("6 servings": a recipe for 6 people serves 6).
 */
function peopleCountAt(c: Ctx, i: number): Resolved | undefined {
  const t = c.tokens[i];
  if (!t || !namesPeople(c, t.word)) return undefined;
  const counts = c.model.properties.filter(
    (p) => p.kind === 'number' && p.dimension === 'count' && !!p.unit && /^[a-z]+$/.test(p.unit),
  );
  const ofPeople = counts.filter((p) => namesPeople(c, p.unit!));
  const prop = (ofPeople.length ? ofPeople : counts.length === 1 ? counts : []).sort(
    (a, b) => b.count - a.count,
  )[0];
  return prop
    ? { target: { path: prop.path }, prop, label: prop.label, score: 0.6, from: i, to: i + 1 }
    : undefined;
}

/** Dimensions whose numbers are no measure in a unit: counts, ratings and price levels. */
const UNMEASURED: ReadonlySet<string> = new Set(['count', 'rating', 'price level']);

/** A month or a year as a unit of time. */
const calendarSpan = (u: Unit | undefined): boolean => u?.dimension === 'time' && u.factor >= 43_830;

/**
 * The numeric properties a unit alone could measure, most common first. Months and years ("10
 * years") name an age or a span far more often than a running time: only properties kept in
 * months or years take them.
 */
function propertiesOfUnit(c: Ctx, unit: Unit): PropertyModel[] {
  return c.model.properties
    .filter(
      (p) =>
        p.kind === 'number' &&
        p.dimension === unit.dimension &&
        (!calendarSpan(unit) || calendarSpan(unitOf(p.displayUnit))),
    )
    .sort((a, b) => b.count - a.count);
}

/** Whether the number that starts at token `i` has a unit written after it ("2000 sq ft"). */
function measured(c: Ctx, i: number): boolean {
  const n = c.numbers.find((m) => m.from === i);
  return n !== undefined && unitAfter(c, n) !== undefined;
}

/** A unit written right after a number ("6000 grams", "2 hours", "30 mpg", "20%"). */
function unitAfter(c: Ctx, n: NumberSpan): { unit: Unit; to: number } | undefined {
  const last = c.tokens[n.to - 1]!;
  const tail = c.text.slice(last.end, last.end + 2);
  if (tail.startsWith('%')) return { unit: unitOf('%')!, to: n.to };
  if (n.money) {
    const next = c.tokens[n.to];
    const word = next ? unitOf(next.word) : undefined;
    return {
      unit: word?.dimension === 'money' ? word : unitOf('$')!,
      to: word?.dimension === 'money' ? n.to + 1 : n.to,
    };
  }
  for (let k = Math.min(MAX_UNIT_WORDS, c.tokens.length - n.to); k >= 1; k--) {
    const phrase = words(c, n.to, n.to + k);
    // "in", "a", "at": words of English first ("75 in 2005")
    if (STOPWORDS.has(phrase)) continue;
    const unit = unitOf(phrase);
    // one-letter symbols only written against the number ("6kg", "150 m" is fine; "a" is not a unit)
    if (unit && (phrase.length > 1 || c.tokens[n.to]!.start - last.end <= 1)) return { unit, to: n.to + k };
  }
  // "6kg": the unit glued to the number is part of its token
  const glued = /^[\d.,]+([a-z%$]+)$/i.exec(last.raw);
  if (glued) {
    const unit = unitOf(glued[1]);
    if (unit) return { unit, to: n.to };
  }
  return undefined;
}

interface Resolved {
  target: Target;
  prop?: PropertyModel;
  label: string;
  score: number;
  /** Inverted sense: a speed word on a time ("faster than 10 seconds" is less time). */
  inverse?: boolean;
  /** Token range of the words that named it. */
  from: number;
  to: number;
}

/** Words that ask for a difference of two sides rather than their total. */
const DIFFERENCE_WORDS = /\b(difference|margin|gap|by|apart)\b/;

/**
 * The numeric property one word names, or the total of a pair of properties it names equally
 * ("goals" → home score + away score).
 */
function resolveNumeric(
  c: Ctx,
  i: number,
  dimension?: string,
  kinds: readonly string[] = ['number'],
): Resolved | undefined {
  const t = c.tokens[i];
  if (!t || STOPWORDS.has(t.word)) return undefined;
  const degree = c.model.lexicon.degree(t.word);
  const roots = [t.root, degree?.base].filter((x): x is string => !!x && x !== t.word);
  const hits = c.model.resolve(t.word, { kinds, ...(dimension ? { dimension } : {}), roots });
  // properties the word names equally ("beaks": beak length, beak depth) are told apart by an
  // adjective beside it ("short beaks", "beak longer than")
  if (hits.length > 1 && hits[1]!.score >= hits[0]!.score - 0.05) {
    for (const k of [i - 1, i + 1]) {
      const a = c.tokens[k];
      if (!a || STOPWORDS.has(a.word) || !(a.tags.has('Adjective') || c.model.lexicon.degree(a.word)))
        continue;
      const adj = new Map(
        c.model
          .resolve(a.word, { kinds, roots: [a.root, c.model.lexicon.degree(a.word)?.base ?? a.root] })
          .map((h) => [h.prop, h.score]),
      );
      if (adj.size === 0) continue;
      hits.sort((x, y) => y.score + (adj.get(y.prop) ?? 0) * 0.5 - (x.score + (adj.get(x.prop) ?? 0) * 0.5));
      break;
    }
  }
  let best = hits[0];
  if (!best || best.score < 0.5) {
    const fallback = byConcept(c, t.word, roots, dimension);
    if (!fallback) return undefined;
    return { ...fallback, from: i, to: i + 1 };
  }
  // a modifier word before picks one side of a pair ("home goals")
  const top = best;
  const pair = c.model.pairs.find(
    (p) =>
      (p.a === top.prop || p.b === top.prop) &&
      hits.some((h) => h.prop === (p.a === top.prop ? p.b : p.a) && h.score >= top.score - 0.05),
  );
  if (pair) {
    // "won by 3 goals", "a margin of": a difference of the two sides, not their total
    const diff = DIFFERENCE_WORDS.test(words(c, Math.max(0, i - 5), Math.min(c.tokens.length, i + 3)));
    // a word shortly before that names one side only picks it ("home goals", "the away team won by 3")
    let side: { prop: PropertyModel; at: number } | undefined;
    for (let k = i - 1; k >= Math.max(0, i - 7) && !side; k--) {
      const w = c.tokens[k]!.word;
      const inA = pair.a.words.has(w);
      if (STOPWORDS.has(w) || inA === pair.b.words.has(w)) continue;
      side = { prop: inA ? pair.a : pair.b, at: k };
    }
    if (side && !diff) {
      const pick = side.prop;
      return {
        target: { path: pick.path },
        prop: pick,
        label: pick.label,
        score: best.score,
        from: side.at,
        to: i + 1,
      };
    }
    const first = side?.prop ?? pair.a;
    const other = first === pair.a ? pair.b : pair.a;
    // a side named: how far it was ahead; none: how far apart the two were
    const op = diff ? (side ? 'difference' : 'gap') : 'sum';
    const label =
      op === 'sum'
        ? `total ${pair.a.head}`
        : op === 'gap'
          ? `${pair.a.head} margin`
          : `${first.label} − ${other.label}`;
    return {
      target: {
        derived: { op, a: first.path, b: other.path, label, ...(pair.a.unit ? { unit: pair.a.unit } : {}) },
      },
      label,
      score: best.score,
      from: side?.at ?? i,
      to: i + 1,
    };
  }
  // "gross" alone means the whole, not a part: among alike readings take the larger measure
  const rivals = hits.filter(
    (h) =>
      h.score >= best!.score - 0.03 && h.prop.head === best!.prop.head && h.prop.unit === best!.prop.unit,
  );
  if (rivals.length > 1) best = rivals.sort((a, b) => (b.prop.max ?? 0) - (a.prop.max ?? 0))[0]!;
  const speedOnTime = best.prop.dimension === 'time' && t.word !== 'time' && isSpeedWord(c, t.word, roots);
  return {
    target: { path: best.prop.path },
    prop: best.prop,
    label: best.prop.label,
    score: best.score,
    from: i,
    to: i + 1,
    ...(speedOnTime ? { inverse: true } : {}),
  };
}

/**
 * A word that names no property by its words but by what it is about: speed (quick, fast, slow:
 * a speed, or inversely a time) or money coming in or going out (cheap, expensive → the cost).
 */
function byConcept(
  c: Ctx,
  word: string,
  roots: readonly string[],
  dimension?: string,
): Omit<Resolved, 'from' | 'to'> | undefined {
  const numbers = c.model.properties.filter(
    (p) => p.kind === 'number' && (!dimension || p.dimension === dimension),
  );
  if (isSpeedWord(c, word, roots)) {
    const speed = numbers.filter((p) => p.dimension === 'speed').sort((a, b) => b.count - a.count)[0];
    if (speed) return { target: { path: speed.path }, prop: speed, label: speed.label, score: 0.6 };
    const time = numbers.filter((p) => p.dimension === 'time').sort((a, b) => b.count - a.count)[0];
    if (time)
      return { target: { path: time.path }, prop: time, label: time.label, score: 0.55, inverse: true };
    return undefined;
  }
  // a concept the word carries itself ("expensive"), or that two of its close relations do
  // ("cheap": inexpensive, cheapness): one relation alone is too far ("published" → issue → cost)
  const close = new Map<string, number>();
  for (const w of [word, ...roots])
    for (const [rel, weight] of c.model.lexicon.related(w))
      if (weight >= 0.85) close.set(rel, Math.max(close.get(rel) ?? 0, rel === w ? 2 : 1));
  const support = new Map<string, number>();
  for (const [rel, n] of close)
    for (const k of c.model.lexicon.concepts(rel)) support.set(k, (support.get(k) ?? 0) + n);
  const concepts = new Set([...support].filter(([, n]) => n >= 2).map(([k]) => k));
  const role =
    concepts.has('cost') && !concepts.has('income')
      ? 'cost'
      : concepts.has('income') && !concepts.has('cost')
        ? 'income'
        : undefined;
  if (!role) return undefined;
  const prop = numbers.filter((p) => p.role === role).sort((a, b) => b.count - a.count)[0];
  return prop ? { target: { path: prop.path }, prop, label: prop.label, score: 0.55 } : undefined;
}

/** Whether a word is about speed (quick, fast, slow): on a time, more of it means less time. */
function isSpeedWord(c: Ctx, word: string, roots: readonly string[]): boolean {
  for (const w of [word, ...roots]) {
    const rel = c.model.lexicon.related(w);
    if (
      (rel.get('speed') ?? 0) >= 0.8 ||
      (rel.get('quickness') ?? 0) >= 0.8 ||
      (rel.get('celerity') ?? 0) >= 0.8
    )
      return true;
  }
  return false;
}

/**
 * "made ten times their budget", "grossed 3x its cost": a ratio of two properties of one unit,
 * the one before (by the verb or noun that names it, or what comes in when the other is a cost)
 * over the one after "times".
 */
function readTimes(c: Ctx, n: NumberSpan): boolean {
  const glued = /^\d+(\.\d+)?x$/i.test(c.tokens[n.to - 1]!.word);
  let k = n.to;
  if (!glued) {
    if (!/^(times|x)$/.test(c.tokens[k]?.word ?? '')) return false;
    k++;
  }
  while (k < c.tokens.length && /^(the|its|their|his|her|own|what)$/.test(c.tokens[k]!.word)) k++;
  const b = resolveNumeric(c, k);
  if (!b?.prop) return false;
  const before = comparatorBefore(c, n.from);
  const start = before?.from ?? n.from;
  let a: PropertyModel | undefined;
  for (let j = start - 1; j >= Math.max(0, start - 3) && !a; j--) {
    if (!free(c, j)) continue;
    const r = resolveNumeric(c, j);
    if (r?.prop && r.prop !== b.prop && r.prop.unit === b.prop.unit) a = r.prop;
  }
  // what comes in, when the other is a cost: the widest income ("made" is the worldwide gross)
  if ((!a || a.role === 'income') && b.prop.role === 'cost' && c.model.profit)
    a = c.model.byPath.get(c.model.profit.a);
  if (!a) return false;
  const ratio = { op: 'ratio' as const, a: a.path, b: b.prop.path, label: `${a.label} ÷ ${b.prop.label}` };
  const strict = before?.op === 'gt';
  c.constraints.push({
    kind: 'range',
    target: { derived: ratio },
    min: n.value,
    minInclusive: !strict,
    maxInclusive: true,
    phrase: phraseOf(c, start, k + 1),
    text: `${a.label} ${before ? (strict ? 'more than' : 'at least') : ''} ${formatNumber(n.value)} times ${b.prop.label}`.replace(
      /\s+/g,
      ' ',
    ),
    confidence: 0.7,
  });
  c.orders.push({
    target: { derived: ratio },
    direction: 'desc',
    strength: 'prefer',
    phrase: phraseOf(c, start, k + 1),
    text: `highest ${ratio.label}`,
  });
  mark(c, start, k + 1, 'derived');
  for (let j = start - 1; j >= Math.max(0, start - 3); j--)
    if (free(c, j) && resolveNumeric(c, j)?.prop === a) mark(c, j, j + 1, 'derived');
  return true;
}

/**
 * An adjective names a dimension ("longer": a length); a noun just before it may say which
 * property of it ("a beak longer than 5 cm": the beak length, not the flipper length).
 */
function preferNearbyNoun(c: Ctx, adjAt: number, r: Resolved | undefined): Resolved | undefined {
  const adj = c.tokens[adjAt];
  const adjScores = new Map(
    adj
      ? c.model
          .resolve(adj.word, {
            kinds: ['number'],
            roots: [adj.root, c.model.lexicon.degree(adj.word)?.base ?? adj.root],
          })
          .map((h) => [h.prop, h.score])
      : [],
  );
  for (let k = adjAt - 1; k >= Math.max(0, adjAt - 3); k--) {
    const t = c.tokens[k]!;
    if (STOPWORDS.has(t.word)) continue;
    // only a noun names which property ("beak"); other words ("near", "felt") stop the look back
    if (!t.tags.has('Noun') || t.tags.has('ProperNoun')) break;
    const hits = c.model
      .resolve(t.word, {
        kinds: ['number'],
        roots: [t.root],
        ...(r?.prop?.dimension ? { dimension: r.prop.dimension } : {}),
      })
      .filter((h) => h.score >= 0.6);
    if (hits.length === 0) continue;
    // the property both words name: "beak" + "longer" → beak length, not beak depth
    const best = hits
      .map((h) => ({ ...h, both: h.score + (adjScores.get(h.prop) ?? 0) }))
      .sort((a, b) => b.both - a.both)[0]!;
    return {
      target: { path: best.prop.path },
      prop: best.prop,
      label: best.prop.label,
      score: best.score,
      from: k,
      to: adjAt + 1,
    };
  }
  return r;
}

/** Reads "more than 200 hp", "heavier than 6000 grams", "8-cylinder", "under $10 million", "30 mpg or more". */
function readQuantities(c: Ctx): void {
  for (const n of c.numbers) {
    if (c.used.slice(n.from, n.to).some((u) => u !== undefined)) continue;
    if (n.decade) continue;
    let from = n.from;
    let to = n.to;
    if (readTimes(c, n)) continue;
    const unit = unitAfter(c, n);
    if (unit) to = unit.to;
    // the comparator: before the number, or "or more" after it
    let op: Comparator | undefined;
    let resolved: Resolved | undefined;
    let polarity: 1 | -1 = 1;
    // "older than", "newer than": the comparative's direction in time, and where it stands
    let timeWord: 'asc' | 'desc' | undefined;
    let comparativeAt: number | undefined;
    // a property named between the comparator and the number: "above magnitude 3", "than magnitude 5"
    let at = n.from;
    let noun: Resolved | undefined;
    const prev = c.tokens[n.from - 1];
    if (
      prev &&
      free(c, n.from - 1) &&
      !STOPWORDS.has(prev.word) &&
      !/^(than|between|from)$/.test(prev.word)
    ) {
      const r = resolveNumeric(c, n.from - 1, unit?.unit.dimension);
      const framed =
        comparatorBefore(c, n.from - 1) || /^(than|between)$/.test(c.tokens[n.from - 2]?.word ?? '');
      if (r && r.score >= 0.6 && framed) {
        noun = r;
        at = n.from - 1;
      }
    }
    const before = comparatorBefore(c, at);
    if (before) {
      op = before.op;
      from = before.from;
    } else if (c.tokens[at - 1]?.word === 'than') {
      // "heavier than 6000", "more powerful than 200 hp", "cheaper than", "stronger than magnitude 5"
      const adjAt = at - 2;
      const adj = c.tokens[adjAt];
      const degree = adj ? c.model.lexicon.degree(adj.word) : undefined;
      if (adj && (degree?.degree === 'comparative' || adj.tags.has('Comparative'))) {
        const base = degree?.base ?? adj.root;
        if (base === 'many' || base === 'little') {
          op = base === 'many' ? 'gt' : 'lt';
          from = adjAt;
        } else {
          resolved = noun ?? preferNearbyNoun(c, adjAt, resolveNumeric(c, adjAt, unit?.unit.dimension));
          polarity = c.model.lexicon.polarity(base);
          op = polarity > 0 ? 'gt' : 'lt';
          timeWord = timeDirection(c, adj.word);
          comparativeAt = adjAt;
          from = adjAt;
        }
      } else if (adj && c.tokens[adjAt - 1] && /^(more|less)$/.test(c.tokens[adjAt - 1]!.word)) {
        resolved = noun ?? preferNearbyNoun(c, adjAt, resolveNumeric(c, adjAt, unit?.unit.dimension));
        polarity = c.model.lexicon.polarity(adj.root);
        op = c.tokens[adjAt - 1]!.word === 'more' ? 'gt' : 'lt';
        if (polarity < 0) op = op === 'gt' ? 'lt' : 'gt';
        from = adjAt - 1;
      }
    }
    if (noun && !resolved) {
      resolved = noun;
      from = Math.min(from, noun.from);
    }
    const after = comparatorAfter(c, to);
    if (!op && after) {
      op = after.op;
    }
    if (after) to = Math.max(to, after.to);
    // "between 5 and 10", "between magnitude 4.5 and 5", "from 5 to 10"
    let upper: number | undefined;
    if (
      c.tokens[at - 1]?.word === 'between' ||
      (c.tokens[at - 1]?.word === 'from' && c.tokens[n.to]?.word === 'to')
    ) {
      const next = c.numbers.find(
        (m) => m.from === n.to + 1 && /^(and|to)$/.test(c.tokens[n.to]?.word ?? ''),
      );
      if (next) {
        upper = next.value;
        from = at - 1;
        to = next.to;
        const u2 = unitAfter(c, next);
        if (u2) to = u2.to;
      }
    }
    // the property: named by a comparative adjective (above), a unit, a noun after the number, or a word before
    let unitObj =
      unit?.unit ??
      (upper !== undefined
        ? unitAfter(
            c,
            c.numbers.find((m) => m.from === n.to + 1)!,
          )?.unit
        : undefined);
    if (!resolved) {
      // the items' own type after a number counts them ("top 3 recipes"), names no property
      const typeAfter = !!c.tokens[to] && !!c.model.typeOf(c.tokens[to]!.word);
      const after1 = unitObj || typeAfter ? undefined : resolveNumeric(c, to, undefined);
      // a noun after the number must name the property clearly ("6000 grams" is a unit; "100
      // people" is no magnitude); the two sides of one measure ("6 goals": home + away) confirm each other
      // A measure is written with its unit ("6 g", read above): a number before any other noun
      // counts that noun ("for 6 people" is not 6 g of fat, whatever WordNet relates people to)
      const measured = !!after1?.prop?.dimension && !UNMEASURED.has(after1.prop.dimension);
      const nounAfter =
        after1 && !measured && (after1.score >= 0.55 || (!after1.prop && after1.score >= 0.5))
          ? after1
          : undefined;
      // "for 6 people": the count of the site's items that is of people, or served to them
      const served = !nounAfter && free(c, to) ? peopleCountAt(c, to) : undefined;
      if (served) {
        resolved = served;
        to = Math.max(to, served.to);
        op ??= 'eq';
      } else if (nounAfter && free(c, to)) {
        resolved = nounAfter;
        to = Math.max(to, nounAfter.to);
        // "4 goals or more": the comparator after the noun
        const later = op ? undefined : comparatorAfter(c, to);
        if (later) {
          op = later.op;
          to = later.to;
        }
        op ??= 'eq';
      } else {
        // words before the comparator or number: "budget under", "weighing over", "rated above", "with flippers longer than"
        for (let k = from - 1; k >= Math.max(0, from - 4); k--) {
          // a word already read ("short beaks, under 35 mm") may still name the property
          if (!free(c, k) && c.used[k] !== 'order' && c.used[k] !== 'number') break;
          if (c.model.typeOf(c.tokens[k]!.word)) continue;
          const r = resolveNumeric(c, k, unitObj?.dimension);
          if (r && r.score >= 0.55) {
            // the word names the property; the comparator bounds it as said ("quick recipes under
            // 30 minutes" is under 30 minutes, though quick runs against time)
            resolved = op ? { ...r, inverse: false } : r;
            break;
          }
        }
      }
    }
    if (!resolved && unitObj) {
      // only the unit says what it is: the most common property of that dimension
      const props = propertiesOfUnit(c, unitObj);
      if (props[0])
        resolved = {
          target: { path: props[0].path },
          prop: props[0],
          label: props[0].label,
          score: props.length === 1 ? 0.8 : 0.5,
          from,
          to,
        };
    }
    if (!resolved && op && !unitObj) {
      // "cars under 30k", "homes over 1.5 million": a round sum with no unit is the price
      const cost = scaledAmountOf(c, n);
      if (cost)
        resolved = { target: { path: cost.path }, prop: cost, label: cost.label, score: 0.6, from, to };
    }
    if (!resolved) {
      // no property to bound: still, "at least" is no superlative and the number no free word
      mark(c, from, n.to, 'number');
      continue;
    }
    if (unitObj && resolved.prop?.dimension && unitObj.dimension !== resolved.prop.dimension) {
      // "over 2 hours" cannot be a weight: trust the unit
      const props = propertiesOfUnit(c, unitObj);
      if (!props[0]) continue;
      resolved = {
        target: { path: props[0].path },
        prop: props[0],
        label: props[0].label,
        score: 0.6,
        from,
        to,
      };
    }
    if (resolved.prop && unitObj && !resolved.prop.dimension) unitObj = undefined; // a count with a unit-like word
    // A bare number far outside the property's values that is a year of a year-valued property
    // is that year ("wines newer than 2015": the vintage, not 2,015% alcohol)
    if (!unitObj && resolved.prop && !isYearValued(resolved.prop) && farOutside(resolved.prop, n.value)) {
      const year = yearPropertyOf(c, n.value);
      if (year) {
        const start = comparativeAt ?? from;
        resolved = {
          target: { path: year.path },
          prop: year,
          label: year.label,
          score: 0.6,
          from: start,
          to,
        };
        from = start;
      }
    }
    // "older than 2000" of a year (a vintage, a year built): earlier, not more
    if (timeWord && resolved.prop && isYearValued(resolved.prop)) op = timeWord === 'asc' ? 'lt' : 'gt';
    // "before 1995", "since 2010" of a year that is no date (dates are read with the calendar)
    const timePrep = YEAR_PREPOSITIONS.get(c.tokens[n.from - 1]?.word ?? '');
    if (!op && timePrep && resolved.prop && isYearValued(resolved.prop) && free(c, n.from - 1)) {
      op = timePrep;
      from = Math.min(from, n.from - 1);
    }
    op ??= unitObj ? 'about' : 'eq';
    const toValue = (v: number): number => {
      if (unitObj && resolved!.prop?.unit) return toCanonical(v, unitObj);
      const display = resolved!.prop?.displayUnit ? unitOf(resolved!.prop.displayUnit) : undefined;
      if (display && resolved!.prop?.unit === display.canonical) return toCanonical(v, display);
      return v;
    };
    let value = toValue(n.value);
    let min: number | undefined;
    let max: number | undefined;
    let minInclusive = true;
    let maxInclusive = true;
    if (resolved.inverse && op !== 'eq' && op !== 'about')
      op = ({ gt: 'lt', gte: 'lte', lt: 'gt', lte: 'gte' } as const)[op];
    if (upper !== undefined) {
      min = value;
      max = toValue(upper);
      if (min > max) [min, max] = [max, min];
    } else if (op === 'gt') {
      min = value;
      minInclusive = false;
    } else if (op === 'gte') min = value;
    else if (op === 'lt') {
      max = value;
      maxInclusive = false;
    } else if (op === 'lte') max = value;
    else if (op === 'eq' && resolved.prop?.integer !== false && Number.isInteger(n.value) && !unitObj)
      min = max = value;
    else if (op === 'eq' && Number.isInteger(n.value) && !unitObj) {
      // "magnitude six" on a property with fractions: 6.0 up to 7
      min = value;
      max = toValue(n.value + 1);
      maxInclusive = false;
    } else {
      const tolerance = Math.abs(value) * 0.1;
      min = value - tolerance;
      max = value + tolerance;
      value = min;
    }
    const k: RangeConstraint = {
      kind: 'range',
      target: resolved.target,
      ...(min !== undefined ? { min } : {}),
      ...(max !== undefined ? { max } : {}),
      minInclusive,
      maxInclusive,
      phrase: phraseOf(c, Math.min(from, resolved.from), Math.max(to, resolved.to)),
      text: formatRangeText(resolved.label, resolved.prop, min, max, minInclusive, maxInclusive),
      confidence: Math.min(1, 0.5 + resolved.score / 2),
    };
    c.constraints.push(k);
    const [a, b] = absorb(c, resolved, Math.min(from, resolved.from), Math.max(to, resolved.to));
    mark(c, a, b, 'number');
  }
}

// ---------------------------------------------------------------- orders

/** Words that ask for the top of a rating ("best", "top rated", "greatest"). */
const EVALUATIVE = new Set([
  'good',
  'great',
  'top',
  'excellent',
  'acclaimed',
  'bad',
  'poor',
  'terrible',
  'awful',
  'favorite',
  'favourite',
  'popular',
  'beloved',
  'finest',
  'greatest',
]);

/** The date direction a word asks for: new → latest first, old → earliest first. */
function timeDirection(c: Ctx, word: string): 'asc' | 'desc' | undefined {
  // "recently", "newly": the adverb of the adjective
  const base =
    c.model.lexicon.degree(word)?.base ?? word.replace(/^(recent|new|late|current|fresh|early)ly$/, '$1');
  if (/^(new|recent|late|modern|young|current|latest|newest|fresh|contemporary)$/.test(base)) return 'desc';
  if (/^(old|early|ancient|classic|vintage|earliest|oldest|retro|aged)$/.test(base)) return 'asc';
  return undefined;
}

/** Free words beside a span that name the same property ("fuel" in "fuel efficient") go with it. */
function absorb(c: Ctx, r: Resolved, from: number, to: number): [number, number] {
  if (!r.prop) return [from, to];
  const names = (k: number): boolean => {
    if (!free(c, k)) return false;
    const t = c.tokens[k]!;
    if (STOPWORDS.has(t.word) || c.model.typeOf(t.word)) return false;
    return c.model.resolve(t.word, { roots: [t.root] }).some((h) => h.prop === r.prop && h.score >= 0.6);
  };
  while (from > 0 && names(from - 1)) from--;
  while (to < c.tokens.length && names(to)) to++;
  return [from, to];
}

function addOrder(
  c: Ctx,
  r: Resolved,
  direction: 'asc' | 'desc',
  strength: 'sort' | 'prefer',
  from0: number,
  to0: number,
): void {
  const [from, to] = absorb(c, r, from0, to0);
  const quantiles = r.prop?.quantiles;
  const dir = r.inverse ? (direction === 'asc' ? 'desc' : 'asc') : direction;
  const label = 'path' in r.target ? r.label : r.target.derived.label;
  c.orders.push({
    target: r.target,
    direction: dir,
    strength,
    phrase: phraseOf(c, from, to),
    text: orderText(shownLabel(label), r.prop?.kind === 'date', dir, strength),
    ...(quantiles ? { quantiles } : {}),
  });
  mark(c, from, to, 'order');
}

/** "highest weight", "most pages" (a count: "number of pages"), "latest date published". */
function orderText(label: string, date: boolean, dir: 'asc' | 'desc', strength: 'sort' | 'prefer'): string {
  const counted = /^number of (.+)$/.exec(label)?.[1];
  if (!counted) return `${orderWord(date, dir, strength)} ${label}`;
  const sort = strength === 'sort';
  return `${dir === 'desc' ? (sort ? 'most' : 'many') : sort ? 'fewest' : 'few'} ${counted}`;
}

/** "highest weight", "low price"; dates are "latest" and "earliest", not high and low. */
function orderWord(date: boolean, dir: 'asc' | 'desc', strength: 'sort' | 'prefer'): string {
  const sort = strength === 'sort';
  if (date) return dir === 'desc' ? (sort ? 'latest' : 'recent') : sort ? 'earliest' : 'early';
  return dir === 'desc' ? (sort ? 'highest' : 'high') : sort ? 'lowest' : 'low';
}

const ratingResolved = (c: Ctx, from: number, to: number): Resolved | undefined =>
  c.model.rating
    ? {
        target: { path: c.model.rating.path },
        prop: c.model.rating,
        label: c.model.rating.label,
        score: 0.8,
        from,
        to,
      }
    : undefined;
const dateResolved = (c: Ctx, from: number, to: number): Resolved | undefined =>
  c.model.primaryDate
    ? {
        target: { path: c.model.primaryDate.path },
        prop: c.model.primaryDate,
        label: c.model.primaryDate.label,
        score: 0.8,
        from,
        to,
      }
    : undefined;

/** Superlatives: "the heaviest", "most powerful", "best rated", "highest grossing", "cheapest", "newest". */
function readOrders(c: Ctx): void {
  for (let i = 0; i < c.tokens.length; i++) {
    if (!free(c, i)) continue;
    const t = c.tokens[i]!;
    const degree = c.model.lexicon.degree(t.word);
    const superlative = degree?.degree === 'superlative' || t.tags.has('Superlative') || t.word === 'top';
    if (!superlative) continue;
    // "at least 4.5", "the most 3": comparators and counts, not superlatives
    if (c.tokens[i - 1]?.word === 'at' || /^\d/.test(c.tokens[i + 1]?.word ?? '')) continue;
    const base = degree?.base ?? t.root;
    let from = i;
    if (c.tokens[i - 1]?.word === 'the' && free(c, i - 1)) from = i - 1;
    const next = c.tokens[i + 1];
    // "most powerful", "least expensive", "most goals", "grossed the most"
    if (base === 'many' || base === 'little') {
      const up = base === 'many';
      const word = next && free(c, i + 1) && !STOPWORDS.has(next.word) ? i + 1 : undefined;
      if (word !== undefined) {
        const tw = c.tokens[word]!;
        const time = timeDirection(c, tw.word);
        const r = time
          ? dateResolved(c, word, word + 1)
          : EVALUATIVE.has(tw.root)
            ? ratingResolved(c, word, word + 1)
            : resolveNumeric(c, word, undefined, ['number', 'date']);
        if (r) {
          const pol = time
            ? time === 'desc'
              ? 1
              : -1
            : EVALUATIVE.has(tw.root)
              ? 1
              : tw.tags.has('Adjective')
                ? c.model.lexicon.polarity(tw.root)
                : 1;
          addOrder(c, r, pol > 0 === up ? 'desc' : 'asc', 'sort', from, word + 1);
          continue;
        }
      }
      // "grossed the most": the verb before
      const prev = from - 1;
      if (prev >= 0 && free(c, prev)) {
        const r = resolveNumeric(c, prev);
        if (r) {
          addOrder(c, r, up ? 'desc' : 'asc', 'sort', prev, i + 1);
          continue;
        }
      }
      continue;
    }
    // "highest rated", "best rated", "top rated", "highest grossing", "lowest budget", "best mpg"
    const time = timeDirection(c, t.word);
    if (time) {
      const r = dateResolved(c, from, i + 1);
      if (r) addOrder(c, r, time, 'sort', from, i + 1);
      continue;
    }
    const scaleWord =
      /^(high|low|top|good|bad|great|big|large|small|little)$/.test(base) || EVALUATIVE.has(base);
    if (scaleWord && next && free(c, i + 1) && !STOPWORDS.has(next.word)) {
      const rated = /^(rated|ranked|reviewed|rating|ratings|scored|scoring)$/.test(next.word);
      const r =
        rated && c.model.rating && next.word !== 'scoring'
          ? ratingResolved(c, i + 1, i + 2)
          : resolveNumeric(c, i + 1);
      if (r && r.score >= 0.5) {
        const up = c.model.lexicon.polarity(base) > 0;
        addOrder(c, r, up ? 'desc' : 'asc', 'sort', from, i + 2);
        continue;
      }
    }
    if (EVALUATIVE.has(base)) {
      const r = ratingResolved(c, from, i + 1);
      if (r) addOrder(c, r, c.model.lexicon.polarity(base) > 0 ? 'desc' : 'asc', 'sort', from, i + 1);
      continue;
    }
    // "heaviest", "longest", "cheapest", "quickest": the adjective names the property
    const named = resolveNumeric(c, i, undefined, ['number']);
    const r = named && named.score >= 0.5 ? named : extentByCount(c, base, from, i + 1);
    if (r) addOrder(c, r, c.model.lexicon.polarity(base) > 0 ? 'desc' : 'asc', 'sort', from, i + 1);
  }
}

/**
 * "the longest book" where the items have no length or running time: a work is as long as it
 * has parts, so the one count of the items' own (not of their reviews) that says how many
 * ("number of pages", "word count") stands for its length.
 */
function extentByCount(c: Ctx, adjective: string, from: number, to: number): Resolved | undefined {
  const aboutLength = (c.model.lexicon.related(adjective).get('length') ?? 0) >= 0.85;
  if (!aboutLength) return undefined;
  const measured = c.model.properties.some(
    (p) => p.kind === 'number' && (p.dimension === 'length' || p.dimension === 'time'),
  );
  if (measured) return undefined;
  const counts = c.model.properties.filter(
    (p) =>
      p.kind === 'number' &&
      p.integer &&
      !p.path.includes('.') &&
      !p.unit &&
      (COUNT_LABEL.test(p.label) || /\bcount$/.test(p.label)),
  );
  const prop = counts.length === 1 ? counts[0]! : undefined;
  return prop ? { target: { path: prop.path }, prop, label: prop.label, score: 0.6, from, to } : undefined;
}

/** A label that counts: "number of pages" (schema.org's "numTracks" reads so too). */
const COUNT_LABEL = /^number of \S/;

/** Preferences without a bound: "heavy cars", "low budget", "good mileage", "long flippers", "recent", "economical". */
function readPreferences(c: Ctx, pass: 'noun' | 'alone'): void {
  for (let i = 0; i < c.tokens.length; i++) {
    if (!free(c, i)) continue;
    const t = c.tokens[i]!;
    if (STOPWORDS.has(t.word) && !EVALUATIVE.has(t.word)) continue;
    const degree = c.model.lexicon.degree(t.word);
    const adjective =
      t.tags.has('Adjective') ||
      degree !== undefined ||
      (c.model.lexicon.senses(t.word, 'a').length > 0 && c.model.lexicon.senses(t.word, 'n').length === 0);
    if (!adjective && !timeDirection(c, t.word)) continue;
    const base = degree?.base ?? t.root;
    // "not expensive", "not too long": the other way
    const neg = NEGATIONS.test(c.tokens[i - 1]?.word ?? '')
      ? i - 1
      : /^(too|very|so)$/.test(c.tokens[i - 1]?.word ?? '') && NEGATIONS.test(c.tokens[i - 2]?.word ?? '')
        ? i - 2
        : undefined;
    const negated = neg !== undefined && free(c, neg);
    const up = c.model.lexicon.polarity(base) > 0 !== negated;
    const start = negated ? neg : i;
    if (pass === 'noun') {
      // words of time order by the date, in the other pass ("recently published")
      if (timeDirection(c, t.word)) continue;
      // the two words are a value of the site's ("full time": employment type Full time; "red
      // wines": category Red wine), the second word as written or in a base form
      const second = c.tokens[i + 1]?.word ?? '';
      if ([second, ...c.model.lexicon.baseForms(second)].some((w) => c.model.values.has(`${t.word} ${w}`)))
        continue;
      // an adjective before a noun that names a property: the noun says which, the adjective how
      const next = c.tokens[i + 1];
      if (next && free(c, i + 1) && !STOPWORDS.has(next.word) && !c.model.typeOf(next.word)) {
        const r = resolveNumeric(c, i + 1);
        if (r && r.score >= 0.6) addOrder(c, r, up ? 'desc' : 'asc', 'prefer', i, i + 2);
      }
      continue;
    }
    // an adjective before a name is a preposition there ("near Hualian"); before a value only
    // when the tagger says so ("expensive thai restaurants" keeps "expensive")
    const next = c.tokens[i + 1];
    if (
      next &&
      (c.used[i + 1] === 'name' ||
        next.capitalized ||
        (c.used[i + 1] === 'value' &&
          (t.tags.has('Preposition') || (!c.model.lexicon.degree(t.word) && !t.tags.has('Adjective')))))
    )
      continue;
    const time = timeDirection(c, t.word);
    if (time) {
      const r = dateResolved(c, i, i + 1);
      if (r) addOrder(c, r, negated ? (time === 'asc' ? 'desc' : 'asc') : time, 'prefer', start, i + 1);
      continue;
    }
    if (EVALUATIVE.has(base)) {
      const r = ratingResolved(c, i, i + 1);
      if (r) addOrder(c, r, up ? 'desc' : 'asc', 'prefer', start, i + 1);
      continue;
    }
    // a word of a date's own label says which date ("published last year"), not a preference
    if (namesDate(c, t.word) || namesDate(c, t.root)) continue;
    const named = resolveNumeric(c, i, undefined, ['number']);
    const r = named && named.score >= 0.55 ? named : extentByCount(c, base, i, i + 1);
    if (r) addOrder(c, r, up ? 'desc' : 'asc', 'prefer', start, i + 1);
  }
}

/** Whether a word is one of a date property's own label words ("published": date published). */
const namesDate = (c: Ctx, word: string): boolean =>
  c.model.properties.some((p) => p.kind === 'date' && (p.words.get(word) ?? 0) >= 0.8);

// ---------------------------------------------------------------- derived

/** Hits and flops, profits and losses: income minus cost, when the items have both. */
function readDerived(c: Ctx): void {
  const profit = c.model.profit;
  if (!profit) return;
  for (let i = 0; i < c.tokens.length; i++) {
    if (!free(c, i)) continue;
    const t = c.tokens[i]!;
    if (STOPWORDS.has(t.word) || t.word.length < 3) continue;
    let concepts = c.model.lexicon.concepts(t.root);
    if (!concepts.length && t.root !== t.word) concepts = c.model.lexicon.concepts(t.word);
    const next = c.tokens[i + 1];
    const moneyNext = next && /^(money|cash)$/.test(next.word);
    // "lost money", "made money", "lose money"
    if (moneyNext && /^(lose|lost|losing|loses)$/.test(t.word)) concepts = ['failure'];
    if (moneyNext && /^(make|made|making|makes|earn|earned)$/.test(t.word)) concepts = ['success'];
    const success = concepts.includes('success') && !concepts.includes('failure');
    const failure = concepts.includes('failure') && !concepts.includes('success');
    if (!success && !failure) continue;
    const to = moneyNext ? i + 2 : i + 1;
    const target = { derived: profit };
    c.constraints.push({
      kind: 'range',
      target,
      ...(success ? { min: 0 } : { max: 0 }),
      minInclusive: false,
      maxInclusive: false,
      phrase: phraseOf(c, i, to),
      text: `that ${success ? 'made money' : 'lost money'} (${labelOf(c, profit.a)} ${success ? 'above' : 'below'} ${labelOf(c, profit.b)})`,
      confidence: 0.6,
    });
    c.orders.push({
      target,
      direction: success ? 'desc' : 'asc',
      strength: 'prefer',
      phrase: phraseOf(c, i, to),
      text: success ? 'highest profit' : 'largest loss',
    });
    mark(c, i, to, 'derived');
  }
}

const labelOf = (c: Ctx, path: string): string => c.model.byPath.get(path)?.label ?? path;

// ---------------------------------------------------------------- values

const NEGATIONS = /^(not|no|non|without|except|excluding|but)$/;
/** Words that tie a negation to the value after them: "not in Denver", "not made by Dell". */
const LINKING = /^(in|from|by|at|of|on|with|made|located|set|based|written|directed)$/;

/** Values of the site's enumerations: "western", "PG-13", "japanese" → Japan, "Dream island", "directed by Clint Eastwood". */
function readValues(c: Ctx, withNumbersOnly = false): void {
  const model = c.model;
  for (let i = 0; i < c.tokens.length; i++) {
    if (!free(c, i)) continue;
    let matched = false;
    for (let n = Math.min(6, c.tokens.length - i); n >= 1 && !matched; n--) {
      if (c.used.slice(i, i + n).some((u) => u !== undefined)) continue;
      const slice = c.tokens.slice(i, i + n);
      // a stopword is no value, unless written as one after its property's name ("size M", "size S")
      const named =
        n === 1 &&
        /^\p{Lu}+$/u.test(slice[0]!.raw) &&
        !!model.values.get(slice[0]!.word)?.some((r) => r.prop.label === c.tokens[i - 1]?.word);
      if (!named && slice.every((t) => STOPWORDS.has(t.word))) continue;
      if (
        withNumbersOnly &&
        !(n >= 2 && slice.some((t) => /\d/.test(t.word)) && slice.some((t) => /\p{L}/u.test(t.word)))
      )
        continue;
      const key = slice.map((t) => t.word).join(' ');
      let refs = model.values.get(key) ?? [];
      let confidence = 0.9;
      // plurals and inflections of the last word ("westerns", "romantic comedies")
      if (refs.length === 0) {
        const last = slice.at(-1)!;
        for (const base of model.lexicon.baseForms(last.word)) {
          const k = [...slice.slice(0, -1).map((t) => t.word), base].join(' ');
          refs = model.values.get(k) ?? [];
          if (refs.length) break;
        }
      }
      // a single word related to a value ("japanese" → Japan, "funny" → Comedy)
      if (refs.length === 0 && n === 1 && !STOPWORDS.has(key) && key.length > 2) {
        const related = [...model.lexicon.related(slice[0]!.word)]
          .filter(([, w]) => w >= 0.85)
          .sort((a, b) => b[1] - a[1]);
        for (const [w] of related) {
          const k = nameKey(w);
          const hit = model.values.get(k);
          if (hit?.length) {
            refs = hit;
            confidence = 0.7;
            break;
          }
        }
      }
      if (refs.length === 0) continue;
      // "not rated R": a negation, not the value "Not Rated", when a value of that property follows
      const nextWord = c.tokens[i + n]?.word;
      if (
        NEGATIONS.test(slice[0]!.word) &&
        nextWord &&
        refs.some((r) => model.values.get(nextWord)?.some((x) => x.prop === r.prop))
      )
        continue;
      // short or common values need more evidence: "r", "g", "no", "action" is fine, "it" is not
      const single = slice[0]!;
      if (
        n === 1 &&
        key.length <= 2 &&
        !(single.raw === single.raw.toUpperCase() && /\p{Lu}/u.test(single.raw))
      )
        continue;
      const prop = pickProperty(c, refs, i, i + n);
      if (!prop) continue;
      const mine = refs.filter((r) => r.prop === prop.prop);
      const values = [...new Set(mine.map((r) => r.value.toLowerCase()))];
      const shownAs = [...new Set(mine.map((r) => r.value))].join(' or ');
      // a value that is a word heading others ("comedy" in "Romantic Comedy") takes them too
      const contains =
        n === 1 &&
        (model.valueWords.get(key)?.get(prop.prop) ?? 0) >
          refs.filter((r) => r.prop === prop.prop).reduce((s, r) => s + r.count, 0)
          ? [[key]]
          : [];
      pushValue(
        c,
        prop.prop,
        values,
        contains,
        Math.min(i, prop.from),
        Math.max(i + n, prop.to),
        confidence,
        i,
        shownAs,
      );
      matched = true;
      i += n - 1;
    }
    if (matched || withNumbersOnly) continue;
    // a word some values contain ("kids" in "Kids Fiction", "alaska" in "10km SW of Kodiak, Alaska")
    const t = c.tokens[i]!;
    if (STOPWORDS.has(t.word) || t.word.length < 3 || /^\d+$/.test(t.word)) continue;
    if (model.typeOf(t.word) || model.siteWords.has(t.word) || model.siteWords.has(t.root)) continue;
    const word = model.valueWords.has(t.word) ? t.word : t.root;
    const owners = model.valueWords.get(word);
    if (!owners) continue;
    const ranked = [...owners.entries()].sort((a, b) => b[1] - a[1]);
    const [prop, count] = ranked[0]!;
    if (count < 2) continue;
    // a property whose values are mostly distinct is prose-like: only a word capitalized or unknown to English
    const proseLike = (prop.distinct ?? 0) > prop.count * 0.5;
    if (proseLike && !t.capitalized && model.lexicon.knows(t.word)) continue;
    // adjectives and verbs ("big", "new") are not what a value is named by, unless the property
    // is a small enumeration the word tells apart ("online": eventAttendanceMode Online or Offline)
    const forms = model.lexicon.baseForms(t.word);
    const nounish = forms.length === 0 || forms.some((f) => model.lexicon.senses(f, 'n').length > 0);
    const tellsApart = (prop.distinct ?? Infinity) <= SMALL_ENUMERATION && count < prop.count;
    if (!nounish && !t.capitalized && !tellsApart) continue;
    pushValue(c, prop, [], [[word]], i, i + 1, proseLike ? 0.5 : 0.6, i);
  }
}

/**
 * A property of yes and no named by a word: "restaurants that take reservations" asks for the
 * items where it is yes (`acceptsReservations`), "without reservations" for the others.
 */
function readYesNo(c: Ctx): void {
  for (let i = 0; i < c.tokens.length; i++) {
    if (!free(c, i)) continue;
    const t = c.tokens[i]!;
    if (STOPWORDS.has(t.word) || t.word.length < 3) continue;
    const hit = c.model.resolve(t.word, { kinds: ['enum'], roots: [t.root] })[0];
    if (!hit || hit.score < 0.6) continue;
    const values = hit.prop.values ?? [];
    if (values.length === 0 || !values.every((v) => YES_NO.has(v.value.toLowerCase()))) continue;
    pushValue(c, hit.prop, ['yes'], [], i, i + 1, 0.8, i, 'yes');
    // said as the property itself: "accepts reservations", "not: accepts reservations"
    const k = c.constraints.at(-1);
    if (k?.kind === 'value' && k.path === hit.prop.path)
      k.text = `${k.negated ? 'not: ' : ''}${hit.prop.label}`;
  }
}
const YES_NO = new Set(['yes', 'no']);

/**
 * An adjective that means none of a cost ("free": costing nothing) bounds the site's cost at 0:
 * "free events". After a noun it says the item is without that noun ("gluten free"), and is left.
 */
function readNoneOf(c: Ctx): void {
  for (let i = 0; i < c.tokens.length; i++) {
    if (!free(c, i)) continue;
    const t = c.tokens[i]!;
    const concept = c.model.lexicon.noneOf(t.word);
    if (concept !== 'cost' && concept !== 'income') continue;
    const prev = c.tokens[i - 1];
    if (
      prev &&
      free(c, i - 1) &&
      !STOPWORDS.has(prev.word) &&
      prev.tags.has('Noun') &&
      !c.model.typeOf(prev.word)
    )
      continue;
    const prop = c.model.properties
      .filter((p) => p.kind === 'number' && p.role === concept)
      .sort((a, b) => b.count - a.count)[0];
    if (!prop) continue;
    pushNone(c, { path: prop.path }, i, i + 1, `${t.word} (${prop.label} 0)`);
    mark(c, i, i + 1, 'value');
  }
}

/** None of a quantity: at most 0 ("free", "no experience"). */
function pushNone(c: Ctx, target: Target, from: number, to: number, text: string): void {
  c.constraints.push({
    kind: 'range',
    target,
    max: 0,
    minInclusive: true,
    maxInclusive: true,
    phrase: phraseOf(c, from, to),
    text,
    confidence: 0.8,
  });
}

/**
 * "no experience", "no reviews": a count or measure the next word or two name, at 0, where some
 * items have 0 of it (otherwise "no" says nothing the data can tell).
 */
function readNone(c: Ctx): void {
  for (let i = 0; i < c.tokens.length - 1; i++) {
    if (c.tokens[i]!.word !== 'no' || !free(c, i)) continue;
    for (let k = i + 1; k <= Math.min(i + 2, c.tokens.length - 1); k++) {
      if (!free(c, k)) break;
      const r = resolveNumeric(c, k);
      if (!r?.prop || r.score < 0.6 || (r.prop.min ?? 1) > 0) continue;
      pushNone(c, r.target, i, k + 1, `no ${words(c, i + 1, k + 1)} (${r.label} 0)`);
      mark(c, i, k + 1, 'number');
      break;
    }
  }
}

/** At most this many distinct values: an enumeration (schema.org's, a site's own few categories). */
const SMALL_ENUMERATION = 12;

/** Which property a value belongs to when several hold it: one named beside it, else the most common. */
function pickProperty(
  c: Ctx,
  refs: readonly { prop: PropertyModel; count: number }[],
  from: number,
  to: number,
): { prop: PropertyModel; from: number; to: number } | undefined {
  const props = [...new Set(refs.map((r) => r.prop))];
  // "Dream island", "island of Dream", "species gentoo", "directed by X", "rated R", "from Japan"
  for (const k of [to, to + 1, from - 1, from - 2]) {
    if (k < 0 || k >= c.tokens.length || !free(c, k)) continue;
    const t = c.tokens[k]!;
    if (STOPWORDS.has(t.word)) continue;
    const hit = c.model
      .resolve(t.word, { kinds: ['enum'], roots: [t.root] })
      .find((h) => props.includes(h.prop));
    if (hit && hit.score >= 0.6) return { prop: hit.prop, from: Math.min(from, k), to: Math.max(to, k + 1) };
  }
  const total = new Map<PropertyModel, number>();
  for (const r of refs) total.set(r.prop, (total.get(r.prop) ?? 0) + r.count);
  const best = [...total.entries()].sort((a, b) => b[1] - a[1] || a[0].distinct! - b[0].distinct!)[0];
  return best ? { prop: best[0], from, to } : undefined;
}

/** A value as a phrase: schema.org's common properties read naturally ("directed by …", "from Japan"), others as "island Dream". */
function valuePhrase(prop: PropertyModel, shown: string): string {
  const key = prop.path.split('.').at(-1)!;
  const phrase = VALUE_PHRASES.get(key);
  // words in lowercase (a word some values contain) are shown capitalized, as values are written
  const titled =
    shown === shown.toLowerCase() ? shown.replace(/\b\p{Ll}/gu, (ch) => ch.toUpperCase()) : shown;
  return phrase ? phrase(titled) : `${prop.label} ${titled}`;
}

/**
 * How a value of schema.org's common properties reads in a constraint: the phrases items are
 * described with (`PHRASES`), for these properties, except that a genre is one the items are
 * "in" and a creator simply "by".
 */
const VALUE_PHRASES = new Map<string, (v: string) => string>([
  ...[
    'director',
    'author',
    'actor',
    'brand',
    'manufacturer',
    'countryOfOrigin',
    'contentRating',
    'inLanguage',
    'byArtist',
  ].map((k): [string, (v: string) => string] => [k, PHRASES.get(k)!]),
  ['creator', (v) => `by ${v}`],
  ['genre', (v) => `in ${v}`],
]);

function pushValue(
  c: Ctx,
  prop: PropertyModel,
  values: string[],
  contains: string[][],
  from: number,
  to: number,
  confidence: number,
  at: number,
  display?: string,
): void {
  // "not rated R", "non-fiction": a negation just before the value or the words that came with it
  // ("not in Denver", "not made by Dell": over a preposition or two between)
  const linked = (k: number): number => {
    let j = k;
    while (j >= 0 && k - j < 2 && free(c, j) && LINKING.test(c.tokens[j]!.word)) j--;
    return j;
  };
  const before = [at - 1, from - 1, linked(at - 1), linked(from - 1)].find(
    (k) => k >= 0 && free(c, k) && (NEGATIONS.test(c.tokens[k]!.word) || c.tokens[k]!.word === 'non'),
  );
  const negated = before !== undefined;
  const start = before !== undefined ? Math.min(before, from) : from;
  // values of one property joined by "or", "and" or a comma are alternatives ("westerns and
  // comedies"); apart, each is required ("funny films for kids")
  const last = c.constraints.at(-1);
  const joined = (k: ValueConstraint): boolean => {
    const between = c.text
      .slice(c.text.indexOf(k.phrase) + k.phrase.length, c.tokens[start]!.start)
      .toLowerCase();
    return /^\s*(,|or|and|,\s*or|,\s*and)?\s*$/.test(between);
  };
  const same =
    last?.kind === 'value' && last.path === prop.path && last.negated === negated && joined(last)
      ? last
      : undefined;
  const shown =
    display ?? (values.length ? values.join(' or ') : contains.map((w) => w.join(' ')).join(' or '));
  if (same) {
    same.values.push(...values.filter((v) => !same.values.includes(v)));
    same.contains.push(...contains);
    same.phrase = `${same.phrase}, ${phraseOf(c, start, to)}`;
    same.text = `${same.text} or ${shown}`;
    void valuePhrase;
  } else {
    c.constraints.push({
      kind: 'value',
      path: prop.path,
      values,
      contains,
      negated,
      phrase: phraseOf(c, start, to),
      text: `${negated ? 'not ' : ''}${valuePhrase(prop, shown)}`,
      confidence,
    });
  }
  mark(c, start, to, 'value');
}

// ---------------------------------------------------------------- types and site words

function readTypes(c: Ctx): void {
  for (let i = 0; i < c.tokens.length; i++) {
    if (!free(c, i)) continue;
    const t = c.tokens[i]!;
    if (STOPWORDS.has(t.word)) continue;
    const type = c.model.typeOf(t.word);
    if (type && type.score >= 0.9) {
      c.types.add(type.type);
      c.nouns.push(t.raw);
      mark(c, i, i + 1, 'type');
      continue;
    }
    if (c.model.siteWords.has(t.word) || c.model.siteWords.has(t.root)) {
      if (t.tags.has('Noun')) c.nouns.push(t.raw);
      mark(c, i, i + 1, 'site');
    }
  }
  // the type words name the site's own items: a filter only when several types are loaded
  if (c.model.types.length <= 1) c.types.clear();
}

export { formatNumber };
