import {
  INTENT_PHRASES,
  INTENT_WORDS,
  PHRASE_SYNONYMS,
  QUERY_TERM_SYNONYMS,
  TERM_SYNONYMS,
  TYPE_WORDS,
  type Intent,
} from './concepts';
import { matchPhrase, STOPWORDS, stem, tokenize } from './text';

/** Type words by stem, so "cars" and "car" both name Car. */
const TYPES_BY_STEM = new Map([...TYPE_WORDS].map(([word, types]) => [stem(word), types]));

/** One thing the query asks of an item: some words, a type, or a numeric intent. */
export interface QueryRequirement {
  /** The query's own words it came from (lowercase), for descriptions. */
  label: string;
  /** Analyzed terms; the requirement's lexical credit is their average match. */
  terms: string[];
  /** Set when the word names schema.org types: an item of one of them matches outright. */
  types?: readonly string[];
  /** Set for numeric intents: the item's number decides; its words count only when it has none. */
  intent?: Intent;
}

export interface ParsedQuery {
  text: string;
  requirements: QueryRequirement[];
  /** Terms adjacent in the query ("clint eastwood"): each pair found adjacent in a field earns a bonus. */
  pairs: Array<readonly [string, string]>;
  /**
   * The terms to look up in an index, deduplicated: content and intent words. Type words
   * ("movies") are left out, as nearly every item of the type has them and titles that contain
   * them ("Scary Movie") would crowd the rest out; `types` carries them instead. A query of
   * only type words keeps them.
   */
  searchTerms: string[];
  /** Terms that come only from intent words ("best", "fast"): an index should weigh them lightly. */
  intentTerms: string[];
  /** Schema.org types the query names ("cars" → Car, Vehicle). */
  types: string[];
  intents: Intent[];
}

/**
 * Turns a query into requirements: intent phrases and words first ("fuel efficient", "best"),
 * then synonyms ("sci-fi" → science fiction), stopwords dropped, the rest stemmed. A query of
 * nothing but stopwords ("Up", "It") falls back to its raw words so it can still find a title.
 */
export function parseQuery(query: string): ParsedQuery {
  const raw = tokenize(query);
  const requirements: QueryRequirement[] = [];
  const pairs: Array<readonly [string, string]> = [];
  const seen = new Set<string>();
  let previous: string | undefined; // last term of the current run of content words

  const add = (req: QueryRequirement): void => {
    const key = `${req.intent ?? ''}|${req.terms.join(' ')}`;
    if (seen.has(key)) return;
    seen.add(key);
    requirements.push(req);
  };

  for (let i = 0; i < raw.length;) {
    const intentPhrase = matchPhrase(raw, i, INTENT_PHRASES);
    const token = raw[i]!;
    const intent = intentPhrase?.value ?? INTENT_WORDS.get(token);
    if (intent) {
      const words = raw.slice(i, i + (intentPhrase?.length ?? 1));
      i += words.length;
      add({ label: words.join(' '), terms: words.filter((w) => !STOPWORDS.has(w)).map(stem), intent });
      previous = undefined;
      continue;
    }
    const synonymPhrase = matchPhrase(raw, i, PHRASE_SYNONYMS);
    let words: string[];
    let canonical: readonly string[];
    if (synonymPhrase) {
      words = raw.slice(i, i + synonymPhrase.length);
      canonical = synonymPhrase.value;
      i += synonymPhrase.length;
    } else {
      i++;
      if (STOPWORDS.has(token)) {
        previous = undefined;
        continue;
      }
      words = [token];
      canonical = QUERY_TERM_SYNONYMS.get(token) ?? TERM_SYNONYMS.get(token) ?? [token];
    }
    const terms = canonical.map(stem);
    const types = terms.length === 1 ? TYPES_BY_STEM.get(terms[0]!) : undefined;
    add({ label: words.join(' '), terms, ...(types ? { types } : {}) });
    if (previous) pairs.push([previous, terms[0]!]);
    for (let j = 0; j + 1 < terms.length; j++) pairs.push([terms[j]!, terms[j + 1]!]);
    previous = terms.at(-1);
  }

  if (requirements.length === 0) {
    for (const token of raw) add({ label: token, terms: [stem(token)] });
  }

  const unique = (xs: string[]): string[] => [...new Set(xs)];
  const content = requirements.filter((r) => !r.types);
  const searchTerms = unique((content.length ? content : requirements).flatMap((r) => r.terms));
  const plainTerms = new Set(requirements.filter((r) => !r.intent).flatMap((r) => r.terms));
  const intentTerms = unique(requirements.filter((r) => r.intent).flatMap((r) => r.terms)).filter(
    (t) => !plainTerms.has(t),
  );
  const types = unique(requirements.flatMap((r) => r.types ?? []));
  const intents = [...new Set(requirements.flatMap((r) => (r.intent ? [r.intent] : [])))];
  return { text: query, requirements, pairs, searchTerms, intentTerms, types, intents };
}
