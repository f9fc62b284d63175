import { itemFacts, intentEvidence, intentValue, type ItemFacts } from './facts';
import { FIELD_NAMES, FIELD_WEIGHTS, flattenItem, itemTypes, type FieldName, type ItemLike } from './fields';
import { parseQuery, type ParsedQuery, type QueryRequirement } from './query';
import { analyze } from './text';

/** A local relevance judgement: 0..100 (NLWeb's scale) and one line saying why. */
export interface ItemScore {
  score: number;
  description: string;
}

/** Points for each pair of adjacent query terms found adjacent in one field, and their cap. */
const PHRASE_BONUS_PER_PAIR = 5;
const PHRASE_BONUS_MAX = 10;
/** Below this score the description also says what did not match. */
const EXPLAIN_MISSES_BELOW = 75;
/** A requirement counts as met (for the description) from this credit on. */
const MET = 0.5;

interface FieldIndex {
  terms: Set<string>;
  /** "a b" for terms adjacent within one value (stopwords removed). */
  bigrams: Set<string>;
}

/** An item analyzed once for scoring: its fields as term sets, its types, numbers and summary. */
export interface AnalyzedItem {
  fields: Record<FieldName, FieldIndex>;
  types: string[];
  facts: ItemFacts;
  summary: string;
}

export function analyzeItem(item: ItemLike): AnalyzedItem {
  const flat = flattenItem(item);
  const fields = {} as Record<FieldName, FieldIndex>;
  for (const name of FIELD_NAMES) {
    const index: FieldIndex = { terms: new Set(), bigrams: new Set() };
    for (const value of flat[name]) {
      const terms = analyze(value);
      terms.forEach((t, i) => {
        index.terms.add(t);
        if (i > 0) index.bigrams.add(`${terms[i - 1]} ${t}`);
      });
      // Titles made of stopwords ("Up", "It") must still answer a query of those words.
      if (name === 'name') for (const t of analyze(value, true)) index.terms.add(t);
    }
    fields[name] = index;
  }
  const facts = itemFacts(item.schema_object);
  return { fields, types: itemTypes(item), facts, summary: summarize(item, facts) };
}

/**
 * Scores an item for a query, deterministically, from the two alone:
 * - each requirement (content word, type word, numeric intent) earns credit 0..1: a word by
 *   the best field it occurs in (FIELD_WEIGHTS), a type word fully when the item is of that
 *   type, an intent by the item's number (facts.ts) or, when it has none, by its words;
 * - the score is the average credit × 100, plus PHRASE_BONUS_PER_PAIR for each pair of
 *   adjacent query words found adjacent in one field ("clint eastwood" in the director),
 *   capped at 100.
 * Pass a ParsedQuery (parseQuery) when scoring many items for one query.
 */
export function scoreItem(query: string | ParsedQuery, item: ItemLike | AnalyzedItem): ItemScore {
  const parsed = typeof query === 'string' ? parseQuery(query) : query;
  const analyzed = 'schema_object' in item ? analyzeItem(item) : item;
  if (parsed.requirements.length === 0) {
    return { score: 0, description: `${analyzed.summary}; the query has no searchable words` };
  }

  const met: string[] = [];
  const missed: string[] = [];
  let credit = 0;
  for (const req of parsed.requirements) {
    const c = requirementCredit(req, analyzed);
    credit += c;
    const evidence = req.intent ? intentEvidence(req.intent, analyzed.facts) : undefined;
    const label = evidence ? `${req.label} (${evidence})` : req.label;
    (c >= MET ? met : missed).push(label);
  }

  let pairsFound = 0;
  for (const [a, b] of parsed.pairs) {
    const bigram = `${a} ${b}`;
    if (FIELD_NAMES.some((f) => analyzed.fields[f].bigrams.has(bigram))) pairsFound++;
  }
  const bonus = Math.min(PHRASE_BONUS_MAX, pairsFound * PHRASE_BONUS_PER_PAIR);
  const score = Math.max(0, Math.min(100, Math.round((100 * credit) / parsed.requirements.length + bonus)));

  let description = analyzed.summary;
  if (met.length) description += `; matches: ${met.join(', ')}`;
  if (missed.length && (score < EXPLAIN_MISSES_BELOW || met.length === 0)) {
    description += `; does not match: ${missed.join(', ')}`;
  }
  return { score, description: description.replace(/\s+/g, ' ') };
}

function termCredit(term: string, item: AnalyzedItem): number {
  let best = 0;
  for (const f of FIELD_NAMES) if (item.fields[f].terms.has(term)) best = Math.max(best, FIELD_WEIGHTS[f]);
  return best;
}

function requirementCredit(req: QueryRequirement, item: AnalyzedItem): number {
  const lexical = req.terms.length
    ? req.terms.reduce((sum, t) => sum + termCredit(t, item), 0) / req.terms.length
    : 0;
  if (req.types?.some((t) => item.types.includes(t))) return 1;
  if (req.intent) {
    // The number decides when the item has one ("best" is a rating, not "Best in Show");
    // lacking it, the words count ("fast" in "The Fast and the Furious").
    return intentValue(req.intent, item.facts) ?? lexical;
  }
  return lexical;
}

const str = (v: unknown): string | undefined => {
  const x = Array.isArray(v) ? v[0] : v;
  if (typeof x === 'string') return x.trim() || undefined;
  if (typeof x === 'object' && x !== null && typeof (x as { name?: unknown }).name === 'string') {
    return (x as { name: string }).name.trim() || undefined;
  }
  return undefined;
};

/** A short phrase saying what the item is: "Western directed by Clint Eastwood (1985)". */
export function summarize(item: ItemLike, facts: ItemFacts = itemFacts(item.schema_object)): string {
  const s = item.schema_object;
  const type = itemTypes(item)[0] ?? 'Item';
  const year = facts.year ? ` (${facts.year})` : '';
  if (type === 'Movie') {
    const director = str(s.director);
    return `${str(s.genre) ?? 'Movie'}${director ? ` directed by ${director}` : ''}${year}`;
  }
  if (type === 'Car' || type === 'Vehicle') {
    const country = str(s.countryOfOrigin);
    const numbers = [
      facts.mpg !== undefined ? intentEvidence('efficiency', facts) : undefined,
      facts.horsepower !== undefined ? intentEvidence('power', facts) : undefined,
    ].filter(Boolean);
    return `Car${country ? ` from ${country}` : ''}${year}${numbers.length ? `, ${numbers.join(', ')}` : ''}`;
  }
  const genre = str(s.genre) ?? str(s.category);
  return `${type}${genre ? ` (${genre})` : ''}${year}`;
}
