import { FIELD_NAMES, FIELD_WEIGHTS, flattenItem, itemTypes, type FieldName, type ItemLike } from './fields';
import { parseQuery, type ParsedQuery, type QueryRequirement } from './query';
import { analyze, stem, tokenize } from './text';

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

/** An item analyzed once for scoring: its fields as term sets, and the stems of its type names. */
export interface AnalyzedItem {
  fields: Record<FieldName, FieldIndex>;
  /** Stems of the words of its schema.org types ("movi" for Movie), which a query word may name. */
  typeTerms: Set<string>;
  /**
   * Stems of the words of its property names ("fuel", "effici" for fuelEfficiency; PropertyValue
   * names too), computed the first time a query word is not among its values.
   */
  keyTerms: () => Set<string>;
}

/** Credit for a query word that names one of the item's properties rather than a value. */
const KEY_WEIGHT = 0.6;

/** The words of an item's property names: keys split at case changes, and PropertyValue names. */
function propertyWords(value: unknown, out: Set<string>, depth = 0): void {
  if (depth > 4 || typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    for (const v of value.slice(0, 50)) propertyWords(v, out, depth + 1);
    return;
  }
  const o = value as Record<string, unknown>;
  if (o['@type'] === 'PropertyValue' && typeof o.name === 'string')
    for (const t of analyze(o.name)) out.add(t);
  for (const [k, v] of Object.entries(o)) {
    if (k.startsWith('@')) continue;
    for (const t of analyze(k.replace(/([a-z\d])([A-Z])/g, '$1 $2').replace(/_/g, ' '))) out.add(t);
    propertyWords(v, out, depth + 1);
  }
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
  const typeTerms = new Set(
    itemTypes(item).flatMap((t) => tokenize(t.replace(/([a-z\d])([A-Z])/g, '$1 $2')).map(stem)),
  );
  let keys: Set<string> | undefined;
  const keyTerms = (): Set<string> => {
    if (!keys) propertyWords(item.schema_object, (keys = new Set<string>()));
    return keys;
  };
  return { fields, typeTerms, keyTerms };
}

/**
 * Scores an item for a query by its words alone, deterministically:
 * - each query word earns credit 0..1 by the best field it occurs in (FIELD_WEIGHTS), or fully
 *   when it names the item's own schema.org type ("movies" for a Movie);
 * - the score is the average credit × 100, plus PHRASE_BONUS_PER_PAIR for each pair of
 *   adjacent query words found adjacent in one field ("clint eastwood" in the director),
 *   capped at 100.
 * The description says which words matched (diagnostics: the understand library writes
 * descriptions for people). Pass a ParsedQuery (parseQuery) when scoring many items for one query.
 */
export function scoreItem(query: string | ParsedQuery, item: ItemLike | AnalyzedItem): ItemScore {
  const parsed = typeof query === 'string' ? parseQuery(query) : query;
  const analyzed = 'schema_object' in item ? analyzeItem(item) : item;
  if (parsed.requirements.length === 0) return { score: 0, description: 'the query has no searchable words' };
  const met: string[] = [];
  const missed: string[] = [];
  let credit = 0;
  for (const req of parsed.requirements) {
    const c = requirementCredit(req, analyzed);
    credit += c;
    (c >= MET ? met : missed).push(req.label);
  }
  let pairsFound = 0;
  for (const [a, b] of parsed.pairs) {
    const bigram = `${a} ${b}`;
    if (FIELD_NAMES.some((f) => analyzed.fields[f].bigrams.has(bigram))) pairsFound++;
  }
  const bonus = Math.min(PHRASE_BONUS_MAX, pairsFound * PHRASE_BONUS_PER_PAIR);
  const score = Math.max(0, Math.min(100, Math.round((100 * credit) / parsed.requirements.length + bonus)));
  const parts: string[] = [];
  if (met.length) parts.push(`matches: ${met.join(', ')}`);
  if (missed.length && (score < EXPLAIN_MISSES_BELOW || met.length === 0))
    parts.push(`does not match: ${missed.join(', ')}`);
  return { score, description: parts.join('; ') || 'no words matched' };
}

function termCredit(term: string, item: AnalyzedItem): number {
  let best = 0;
  for (const f of FIELD_NAMES) if (item.fields[f].terms.has(term)) best = Math.max(best, FIELD_WEIGHTS[f]);
  return best > 0 ? best : item.keyTerms().has(term) ? KEY_WEIGHT : 0;
}

function requirementCredit(req: QueryRequirement, item: AnalyzedItem): number {
  if (req.terms.length > 0 && req.terms.every((t) => item.typeTerms.has(t))) return 1;
  return req.terms.length ? req.terms.reduce((sum, t) => sum + termCredit(t, item), 0) / req.terms.length : 0;
}
