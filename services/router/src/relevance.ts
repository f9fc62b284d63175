import type { Understanding } from '@askbus/contracts';
import { ancestry, SCHEMA_PARENTS } from '@askbus/tools';
import { Lexicon, type WordNetLike } from '@askbus/understand';

/** "MusicRecording" → "music recording". */
const typeWords = (type: string): string => type.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();

/** Whether one type is the other, or a kind of it (either way round). */
const related = (a: string, b: string): boolean => ancestry(a).includes(b) || ancestry(b).includes(a);

/**
 * Closed-class words of English grammar. A question's head, the thing it asks for, comes before
 * its first preposition ("hotels in Paris", "recipes with chicken"; "laptops in store" asks for
 * laptops); a word after a modal, a pronoun or "to" is a verb ("can I book a table").
 */
const PREPOSITIONS = new Set(
  'in at on near from by for with without about of under over between like than into within around'.split(
    ' ',
  ),
);
const BEFORE_VERB = new Set(
  'to can could would will should shall may might must i we you please lets'.split(' '),
);
/** Types that are not things a site lists: ideas, quantities, actions. */
const ABSTRACT = new Set(['Intangible', 'Action']);

/** A schema.org type a question names, and the word that names it ("films" → Movie). */
export interface NamedType {
  type: string;
  word: string;
}

/** How many hypernym steps a word may be below a type's sense and still name it ("sedan" → car). */
const KIND_STEPS = 2;

/**
 * The schema.org types a question names, read through WordNet: a word whose usual sense is a
 * type's usual sense, or a kind of it ("films" → Movie, "automobile" and "sedan" → Car, "recipe"
 * → Recipe). Thing and its direct children (Person, Place, Product, Event, …) are too broad to say
 * what a question is about ("recipes for 4 people" is not about Person), and abstract types are
 * not things a site lists ("statistics about laptops"), so they are not read. Only the question's
 * head is read, the words before its first preposition.
 */
export class SchemaTypeWords {
  private readonly lexicon: Lexicon;
  /** A type's usual noun sense → the type. */
  private readonly bySense = new Map<string, string>();

  constructor(wordnet: WordNetLike) {
    this.lexicon = new Lexicon(wordnet);
    for (const type of Object.keys(SCHEMA_PARENTS)) {
      const chain = ancestry(type);
      if (chain.length <= 2 || chain.some((t) => ABSTRACT.has(t))) continue;
      const sense = this.lexicon.senses(typeWords(type), 'n')[0];
      if (sense && !this.bySense.has(sense)) this.bySense.set(sense, type);
    }
  }

  /** The types the question's words name, in the order they come, each with its word. */
  named(query: string): NamedType[] {
    const out: NamedType[] = [];
    const words = query.toLowerCase().match(/[a-z]+/g) ?? [];
    for (const [i, word] of words.entries()) {
      if (PREPOSITIONS.has(word)) break;
      if (i > 0 && BEFORE_VERB.has(words[i - 1]!)) continue;
      for (const base of this.lexicon.baseForms(word)) {
        const sense = this.lexicon.senses(base, 'n')[0];
        const type = sense ? this.lexicon.kindIn(sense, this.bySense, KIND_STEPS) : undefined;
        if (type && !out.some((n) => n.type === type)) out.push({ type, word });
      }
    }
    return out;
  }
}

/**
 * The kinds of thing a question asks for that the site does not hold: the schema.org types it
 * names when none of them is a site's type or a kind of one (either way round), leaving out a
 * word the site's data holds (it is part of a property, value, order or item name the question
 * was read as: "books by Stephen King" on a movie site asks for movies based on books).
 * Empty when the question fits the site, or says nothing of what it is about.
 */
export function foreignTypes(
  named: readonly NamedType[],
  siteTypes: readonly string[],
  understanding: Understanding | undefined,
): string[] {
  if (named.length === 0 || siteTypes.length === 0) return [];
  if (named.some((n) => siteTypes.some((s) => related(n.type, s)))) return [];
  const u = understanding;
  const phrases = u
    ? [
        ...u.constraints.map((c) => c.phrase),
        ...u.orders.map((o) => o.phrase),
        ...u.named.map((n) => n.phrase),
      ]
    : [];
  // "books" against a phrase read as "book": compared without a plural ending
  const stem = (w: string): string => w.replace(/(es|s)$/, '');
  const inData = (word: string): boolean =>
    phrases.some((p) => (p.toLowerCase().match(/[a-z]+/g) ?? []).some((w) => stem(w) === stem(word)));
  return named.filter((n) => !inData(n.word)).map((n) => n.type);
}
