import { stemmer } from 'stemmer';

/**
 * Bump when tokenizing, synonyms or stemming change: an index persisted by an older analyzer
 * holds terms a query can no longer produce, so it must be rebuilt rather than reopened.
 */
export const ANALYZER_VERSION = 3;

/** English function words plus the filler people put in search requests ("show me", "find"). */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have ' +
    'having he her here hers herself him himself his how i if in into is it its itself just me more most ' +
    'my myself no nor not now of off on once only or other our ours ourselves out over own same she ' +
    'should so some such than that the their theirs them themselves then there these they this those ' +
    'through to too under until up very was we were what when where which while who whom why will with ' +
    'would you your yours yourself yourselves s t d ll m re ve don' +
    // query filler: words that say "search" rather than what to search for
    ' show find list give tell recommend recommendation recommendations suggest looking look search want ' +
    'need please something anything ones one good like'
  ).split(' '),
);

// eslint-disable-next-line no-control-regex -- every ASCII character, control ones included
const ASCII = /^[\x00-\x7f]*$/;

/** Lowercase, accents folded ("Amélie" → "amelie"), so queries need not type diacritics. */
export function foldText(text: string): string {
  // most text is plain ASCII: nothing to fold but case
  if (ASCII.test(text)) return text.toLowerCase();
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/**
 * Splits text into lowercase word tokens: runs of Unicode letters or digits. A possessive
 * "'s" is dropped first so "Schindler's" is "schindler", not "schindler" + "s".
 */
export function tokenize(text: string): string[] {
  const folded = foldText(text).replace(/['’]s\b/g, '');
  // ASCII text splits on a cheaper pattern than Unicode's letter and number classes
  return (ASCII.test(folded) ? folded.split(/[^a-z0-9]+/) : folded.split(/[^\p{L}\p{N}]+/u)).filter(
    (t) => t.length > 0,
  );
}

const stemCache = new Map<string, string>();

/** Porter stem of one lowercase token; digits and very short tokens stay as they are. */
export function stem(token: string): string {
  if (token.length < 3 || /^\p{N}+$/u.test(token)) return token;
  let s = stemCache.get(token);
  if (s === undefined) {
    s = stemmer(token);
    if (stemCache.size > 50_000) stemCache.clear(); // bound the memo on odd inputs
    stemCache.set(token, s);
  }
  return s;
}

/** One normalized token to its index term: stopwords dropped (unless kept), the rest stemmed. */
export function processTerm(token: string, keepStopwords = false): string | null {
  if (!keepStopwords && STOPWORDS.has(token)) return null;
  return stem(token);
}

/** Text to its index terms in order: tokenize, normalize, drop stopwords, stem. */
export function analyze(text: string, keepStopwords = false): string[] {
  const terms: string[] = [];
  for (const token of tokenize(text)) {
    const term = processTerm(token, keepStopwords);
    if (term) terms.push(term);
  }
  return terms;
}
