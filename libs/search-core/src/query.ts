import { STOPWORDS, stem, tokenize } from './text';

/** One thing the query asks of an item: some of its words. */
export interface QueryRequirement {
  /** The query's own word it came from (lowercase), for diagnostics. */
  label: string;
  /** Analyzed terms; the requirement's lexical credit is their average match. */
  terms: string[];
}

export interface ParsedQuery {
  text: string;
  requirements: QueryRequirement[];
  /** Terms adjacent in the query ("clint eastwood"): each pair found adjacent in a field earns a bonus. */
  pairs: Array<readonly [string, string]>;
  /** The terms to look up in an index, deduplicated. */
  searchTerms: string[];
}

/**
 * Turns a query into word requirements: stopwords dropped, the rest stemmed. A query of
 * nothing but stopwords ("Up", "It") falls back to its raw words so it can still find a title.
 * What the words mean (units, ranges, values, superlatives) is the understand library's job,
 * against the site's profile; this is the plain word match beside it.
 */
export function parseQuery(query: string): ParsedQuery {
  const raw = tokenize(query);
  const requirements: QueryRequirement[] = [];
  const pairs: Array<readonly [string, string]> = [];
  const seen = new Set<string>();
  let previous: string | undefined; // last term of the current run of content words
  const add = (req: QueryRequirement): void => {
    const key = req.terms.join(' ');
    if (seen.has(key)) return;
    seen.add(key);
    requirements.push(req);
  };
  for (const token of raw) {
    if (STOPWORDS.has(token)) {
      previous = undefined;
      continue;
    }
    const term = stem(token);
    add({ label: token, terms: [term] });
    if (previous) pairs.push([previous, term]);
    previous = term;
  }
  if (requirements.length === 0) {
    for (const token of raw) add({ label: token, terms: [stem(token)] });
  }
  const searchTerms = [...new Set(requirements.flatMap((r) => r.terms))];
  return { text: query, requirements, pairs, searchTerms };
}
