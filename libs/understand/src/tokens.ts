import nlp from 'compromise';
import { wordSpans } from './names';
import { unitOf } from './units';

/**
 * A question as words with what English grammar says of them (compromise's tagger): part of
 * speech, comparative or superlative, the root form, and the numbers written in digits or words
 * ("eight", "2 and a half", "$10 million", "half a million").
 */
export interface Token {
  /** Position in the question's words. */
  i: number;
  /** Lowercase, accents folded, punctuation gone ("pg", "13", "schindler"). */
  word: string;
  /** As written. */
  raw: string;
  start: number;
  end: number;
  /** Root form from the tagger ("cars" → car, "heaviest" → heavy, "directed" → direct). */
  root: string;
  tags: ReadonlySet<string>;
  /** Whether it starts with a capital letter where the question is not written all in one case. */
  capitalized: boolean;
}

/** A number the question writes, over tokens [from, to). */
export interface NumberSpan {
  from: number;
  to: number;
  value: number;
  /** A currency sign or unit word compromise read with it ("$", "dollars"). */
  money: boolean;
  /** Written with a decade suffix ("70s", "'90s", "1980s"). */
  decade: boolean;
  /** The word as written ("1995", "eight"). */
  text: string;
}

export interface TaggedQuestion {
  text: string;
  tokens: Token[];
  numbers: NumberSpan[];
}

interface NlpTerm {
  text: string;
  normal?: string;
  root?: string;
  tags?: string[];
  offset?: { start: number; length: number };
}

/** Splits a question into tagged words and numbers. */
export function tagQuestion(text: string): TaggedQuestion {
  const spans = wordSpans(text);
  const hasLower = /\p{Ll}/u.test(text);
  const hasUpper = /\p{Lu}/u.test(text);
  const mixedCase = hasLower && hasUpper;
  const tokens: Token[] = spans.map((s, i) => ({
    i,
    word: s.word,
    raw: text.slice(s.start, s.end),
    start: s.start,
    end: s.end,
    root: s.word,
    tags: new Set<string>(),
    capitalized: mixedCase && /^\p{Lu}/u.test(text.slice(s.start, s.end)),
  }));
  const doc = nlp(text);
  doc.compute('root');
  const terms = (doc.json({ offset: true, terms: { offset: true } }) as { terms: NlpTerm[] }[]).flatMap(
    (s) => s.terms,
  );
  const at = (start: number, end: number): Token[] => tokens.filter((t) => t.start < end && t.end > start);
  for (const term of terms) {
    if (!term.offset || term.offset.length === 0) continue;
    for (const t of at(term.offset.start, term.offset.start + term.offset.length)) {
      (t.tags as Set<string>).add('_');
      for (const tag of term.tags ?? []) (t.tags as Set<string>).add(tag);
      const root = (term.root ?? '').toLowerCase();
      if (root && /^[\p{L}\p{N} ]+$/u.test(root) && !root.includes(' ')) t.root = root;
    }
  }
  const numbers: NumberSpan[] = [];
  const found = doc.numbers().json({ offset: true }) as {
    text: string;
    number?: { num?: number; unit?: string; prefix?: string };
    offset?: { start: number; length: number };
  }[];
  for (const n of found) {
    const value = n.number?.num;
    if (value === undefined || !Number.isFinite(value) || !n.offset) continue;
    const covered = at(n.offset.start, n.offset.start + n.offset.length);
    // the tagger may take a unit into the number ("10 seconds"): the number ends at its last number word
    while (covered.length > 1 && !isNumberWord(covered.at(-1)!)) covered.pop();
    if (covered.length === 0) continue;
    const written = text.slice(n.offset.start, n.offset.start + n.offset.length);
    // a Roman numeral is a name's part ("Rocky IV") or a value ("size XL", "M"), no quantity asked
    if (/^[ivxlcdm]+$/i.test(written.trim())) continue;
    numbers.push({
      from: covered[0]!.i,
      to: covered.at(-1)!.i + 1,
      value: digitsValue(written) ?? value,
      money: /[$€£¥]/.test(written) || /^(dollars?|euros?|usd)$/i.test(n.number?.unit ?? ''),
      decade: /\d0'?s\b/i.test(written),
      text: written.replace(/[()]/g, '').trim(),
    });
  }
  // "a year", "a mile": one of a unit, which the tagger reads only for some ("an hour")
  tokens.forEach((t, i) => {
    const next = tokens[i + 1];
    if ((t.word !== 'a' && t.word !== 'an') || !next || next.word.length < 3 || !unitOf(next.word)) return;
    if (numbers.some((n) => n.from <= i && i < n.to)) return;
    numbers.push({ from: i, to: i + 1, value: 1, money: false, decade: false, text: t.raw });
  });
  numbers.sort((a, b) => a.from - b.from);
  return { text, tokens, numbers };
}

const SCALES: Record<string, number> = {
  k: 1e3,
  thousand: 1e3,
  m: 1e6,
  mm: 1e6,
  mn: 1e6,
  million: 1e6,
  b: 1e9,
  bn: 1e9,
  billion: 1e9,
};

/**
 * A number written in digits, read exactly: "$5M" → 5,000,000, "250,000" → 250000, "1.5bn",
 * "10 seconds" → 10 (the tagger's reading of digits with letters is not always right).
 * Undefined for numbers in words ("eight", "2 and a half"), which the tagger reads.
 */
export function digitsValue(written: string): number | undefined {
  const m =
    /^\(?[$€£¥]?\s*(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?|\.\d+)\s*(k|m|mm|mn|b|bn|thousand|million|billion)?\b/i.exec(
      written.trim(),
    );
  if (!m) return undefined;
  const rest = written.trim().slice(m[0].length).trim();
  // "2 and a half", "3 1/2": more than digits, the tagger knows better
  if (/^(and|&|\d)/i.test(rest)) return undefined;
  const n = Number(m[1]!.replace(/,/g, ''));
  const scale = m[2] ? (SCALES[m[2].toLowerCase()] ?? 1) : 1;
  return Number.isFinite(n) ? n * scale : undefined;
}

function isNumberWord(t: Token): boolean {
  if (!/\d/.test(t.word) && unitOf(t.word)) return false; // "seconds" is no ordinal here
  return (
    /\d/.test(t.word) ||
    t.tags.has('Value') ||
    t.tags.has('Fraction') ||
    /^(and|a|half|quarter|thousand|million|billion|hundred)$/.test(t.word)
  );
}
