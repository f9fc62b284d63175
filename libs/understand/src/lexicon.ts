/**
 * What a word means, from WordNet: its base forms, the nouns it relates to (an adjective's
 * attribute: heavy → weight; a derivation: funny → comedy, direct → director; a pertainym:
 * japanese → Japan; synonyms: film → movie; a hypernym: goal → score), which end of a scale an
 * adjective names (heavy: much weight; light: little), and the few abstract concepts askbus
 * reasons with (income and cost, success and failure). No site's vocabulary is written here.
 */

import { STOPWORDS } from '@askbus/search-core';

/** What the lexicon needs of WordNet (libs/embeddings' WordNet reader has it). */
export interface WordNetLike {
  senses(lemma: string): string[];
  synset(
    id: string,
  ): { id: string; lemmas: string[]; pointers: { symbol: string; id: string }[]; gloss: string } | undefined;
}

export type Pos = 'n' | 'a' | 'v' | 'r';

/** Irregular comparison (English grammar, not vocabulary): the base form and the degree. */
// a Map, not an object: a question's word may be "constructor" (build → constructor), which an
// object literal answers from its prototype
const IRREGULAR = new Map<string, { base: string; degree: 'comparative' | 'superlative' }>(
  Object.entries({
    better: { base: 'good', degree: 'comparative' },
    best: { base: 'good', degree: 'superlative' },
    worse: { base: 'bad', degree: 'comparative' },
    worst: { base: 'bad', degree: 'superlative' },
    more: { base: 'many', degree: 'comparative' },
    most: { base: 'many', degree: 'superlative' },
    less: { base: 'little', degree: 'comparative' },
    least: { base: 'little', degree: 'superlative' },
    fewer: { base: 'few', degree: 'comparative' },
    fewest: { base: 'few', degree: 'superlative' },
    further: { base: 'far', degree: 'comparative' },
    furthest: { base: 'far', degree: 'superlative' },
    farther: { base: 'far', degree: 'comparative' },
    farthest: { base: 'far', degree: 'superlative' },
    elder: { base: 'old', degree: 'comparative' },
    eldest: { base: 'old', degree: 'superlative' },
  }),
);

/** Gloss words that put an adjective at the low end of its scale ("of comparatively little weight"). */
const LOW_MARKERS =
  /\b(little|small|low|less|lacking|wanting|deficient|devoid|limited|few|short|brief|slight|minimal|not|below|reduced|inexpensive|light)\b/;
/** … and at the high end ("of comparatively great physical weight"). */
const HIGH_MARKERS =
  /\b(great|greater|large|larger|high|higher|much|many|more|considerable|long|heavy|big|excess|extensive|strong|abundant|above)\b/;

/** Words of definitions that say how, not what ("relatively", "having"). */
const GLOSS_FILLER = new Set(
  'relatively comparatively having being characterized marked used especially something someone quality state condition manner degree lacking showing tending capable'.split(
    ' ',
  ),
);

/** The abstract concepts askbus reasons with, as WordNet lemmas that anchor them. */
const CONCEPTS = {
  income: ['income', 'revenue', 'gain', 'gross', 'earnings', 'sales', 'receipts', 'proceeds'],
  cost: ['cost', 'outgo', 'spending', 'expense', 'expenditure', 'fund', 'price'],
  success: ['success', 'profit', 'winner', 'victory'],
  failure: ['failure', 'loss', 'flop', 'defeat', 'loser'],
} as const;
export type Concept = keyof typeof CONCEPTS;

/** Related nouns and adjectives of a word with how close they are (1 = the word itself). */
export type Related = Map<string, number>;

export class Lexicon {
  private readonly relatedCache = new Map<string, Related>();
  private readonly conceptCache = new Map<string, Concept[]>();

  constructor(private readonly wn: WordNetLike) {}

  /** Synset ids of a word for one part of speech (most frequent first). */
  senses(word: string, pos?: Pos): string[] {
    const ids = this.wn.senses(word.replace(/ /g, '_'));
    return pos ? ids.filter((id) => id.startsWith(`${pos}:`)) : ids;
  }

  /**
   * Whether a noun's usual sense is the usual sense of another, or a kind of it up to `depth`
   * hypernyms up ("guests" → guest → visitor → person; "kids" → child → juvenile → person).
   */
  isKindOf(word: string, of: string, depth = 6): boolean {
    const target = this.senses(of, 'n')[0];
    if (!target) return false;
    const targets = new Map([[target, true]]);
    return this.baseForms(word).some((base) => {
      const sense = this.senses(base, 'n')[0];
      return sense !== undefined && this.kindIn(sense, targets, depth) === true;
    });
  }

  /** What `targets` holds for a synset, or for the nearest of its hypernyms up to `depth` steps up. */
  kindIn<T>(sense: string, targets: ReadonlyMap<string, T>, depth: number): T | undefined {
    let level = [sense];
    for (let d = 0; d <= depth && level.length; d++) {
      for (const id of level) {
        const hit = targets.get(id);
        if (hit !== undefined) return hit;
      }
      level = level.flatMap(
        (id) =>
          this.wn
            .synset(id)
            ?.pointers.filter((p) => p.symbol === '@')
            .map((p) => p.id) ?? [],
      );
    }
    return undefined;
  }

  /** Whether WordNet knows the word at all (as any part of speech). */
  knows(word: string): boolean {
    return this.wn.senses(word.replace(/ /g, '_')).length > 0;
  }

  /** Whether a word is ordinary English (WordNet knows it or its base form): such a word alone is a poor name. */
  isCommon(word: string): boolean {
    return this.baseForms(word).length > 0;
  }

  /** Base forms of a word WordNet knows: itself, or inflections undone ("penguins" → penguin, "heaviest" → heavy). */
  baseForms(word: string): string[] {
    const w = word.toLowerCase();
    const out: string[] = [];
    const add = (f: string): void => {
      if (f.length > 1 && this.knows(f) && !out.includes(f)) out.push(f);
    };
    add(w);
    const irregular = IRREGULAR.get(w);
    if (irregular) add(irregular.base);
    if (w.endsWith('ies')) add(`${w.slice(0, -3)}y`);
    if (w.endsWith('es')) add(w.slice(0, -2));
    if (w.endsWith('s') && !w.endsWith('ss')) add(w.slice(0, -1));
    if (w.endsWith('ing')) {
      add(w.slice(0, -3));
      add(`${w.slice(0, -3)}e`);
      if (/(.)\1ing$/.test(w)) add(w.slice(0, -4));
    }
    if (w.endsWith('ed')) {
      add(w.slice(0, -1));
      if (!out.includes(w.slice(0, -1))) add(w.slice(0, -2));
      if (/(.)\1ed$/.test(w)) add(w.slice(0, -3));
      if (w.endsWith('ied')) add(`${w.slice(0, -3)}y`);
    }
    const degree = this.degree(w);
    if (degree) add(degree.base);
    return out;
  }

  /**
   * Comparative or superlative of an adjective ("heavier" → heavy, "biggest" → big, "best" →
   * good), when the word is one; a word that is itself a common noun ("number", "longer") is not.
   */
  degree(word: string): { base: string; degree: 'comparative' | 'superlative' } | undefined {
    const w = word.toLowerCase();
    const irregular = IRREGULAR.get(w);
    if (irregular) return irregular;
    if (STOPWORDS.has(w)) return undefined; // "after", "over", "under"
    const m = /^(.+?)(est|er)$/.exec(w);
    if (!m) return undefined;
    const [, stem = '', ending] = m;
    const degree = ending === 'est' ? 'superlative' : 'comparative';
    const candidates = [stem, `${stem}e`];
    if (stem.endsWith('i')) candidates.push(`${stem.slice(0, -1)}y`);
    if (/(.)\1$/.test(stem)) candidates.push(stem.slice(0, -1));
    for (const base of candidates) {
      if (base.length < 2 || this.senses(base, 'a').length === 0) continue;
      // a noun in its own right with more senses than the adjective reading ("number", "letter")
      if (this.senses(w, 'n').length > this.senses(base, 'a').length) return undefined;
      return { base, degree };
    }
    return undefined;
  }

  /**
   * The lemmas a word relates to, with weights: itself and its base forms (1), synonyms (0.9),
   * an adjective's attribute nouns (0.9), pertainyms (0.9), derivations (0.85), the attributes and
   * derivations of similar adjectives (0.6), hypernyms of nouns (0.6).
   */
  related(word: string): Related {
    const key = word.toLowerCase();
    const hit = this.relatedCache.get(key);
    if (hit) return hit;
    const out: Related = new Map();
    const add = (lemma: string, w: number): void => {
      const l = lemma.toLowerCase();
      if ((out.get(l) ?? 0) < w) out.set(l, w);
    };
    for (const base of this.baseForms(key)) {
      add(base, 1);
      // an adjective's definition names what it is about ("populous": densely populated → population)
      const adj = this.senses(base, 'a')[0];
      const gloss = adj ? this.wn.synset(adj)?.gloss.split(/[;"]/)[0] : undefined;
      for (const g of gloss?.toLowerCase().match(/[a-z]+/g) ?? []) {
        if (g.length < 4 || STOPWORDS.has(g) || GLOSS_FILLER.has(g)) continue;
        add(g, 0.55);
        for (const f of this.baseForms(g).slice(0, 2)) {
          add(f, 0.55);
          for (const id of this.senses(f).slice(0, 2))
            for (const p of this.wn.synset(id)?.pointers ?? [])
              if (p.symbol === '+')
                for (const l of this.wn.synset(p.id)?.lemmas.slice(0, 2) ?? []) add(l, 0.5);
        }
      }
      // a verb that WordNet defines by a noun alone names that noun ("weigh": have a certain
      // weight): its first sense, with no other words for it and no derived noun of its own
      const verb = this.senses(base, 'v')[0];
      const vs = verb ? this.wn.synset(verb) : undefined;
      if (vs && vs.lemmas.length === 1 && !vs.pointers.some((p) => p.symbol === '+')) {
        for (const g of vs.gloss
          .split(/[;"]/)[0]!
          .toLowerCase()
          .match(/[a-z]+/g) ?? []) {
          if (g.length < 4 || STOPWORDS.has(g) || GLOSS_FILLER.has(g) || g === base) continue;
          if (this.senses(g, 'n').length > 0 && this.senses(g, 'a').length === 0) add(g, 0.85);
        }
      }
      for (const pos of ['n', 'a', 'v'] as const) {
        this.senses(base, pos)
          .slice(0, 4)
          .forEach((id, rank) => {
            const s = this.wn.synset(id);
            if (!s) return;
            const near = rank === 0 ? 1 : 0.9;
            for (const l of s.lemmas) add(l, 0.9 * near);
            for (const p of s.pointers) {
              const weight =
                p.symbol === '=' || p.symbol === '\\'
                  ? 0.9
                  : p.symbol === '+'
                    ? 0.85
                    : p.symbol === '@' && pos === 'n'
                      ? 0.6
                      : p.symbol === '&' && pos === 'a'
                        ? -1
                        : 0;
              if (weight === 0) continue;
              const t = this.wn.synset(p.id);
              if (!t) continue;
              if (weight > 0) {
                for (const l of t.lemmas.slice(0, 4)) add(l, weight * near);
                continue;
              }
              // a similar adjective: its attributes and derivations, further away
              if (rank > 1) continue;
              for (const q of t.pointers) {
                if (q.symbol !== '=' && q.symbol !== '+') continue;
                const r = this.wn.synset(q.id);
                if (r && r.id.startsWith('n:')) for (const l of r.lemmas.slice(0, 3)) add(l, 0.6 * near);
              }
            }
          });
      }
    }
    if (this.relatedCache.size > 20_000) this.relatedCache.clear();
    this.relatedCache.set(key, out);
    return out;
  }

  /**
   * The concept an adjective says there is none of, read from its definition: "free" (costing
   * nothing) → cost. Undefined for the rest.
   */
  noneOf(adjective: string): Concept | undefined {
    for (const base of this.baseForms(adjective.toLowerCase()).slice(0, 1)) {
      for (const id of this.senses(base, 'a')) {
        const gloss = this.wn.synset(id)?.gloss.split(/[;"]/)[0]?.trim().toLowerCase() ?? '';
        const m = /^([a-z]+ing) nothing$/.exec(gloss);
        const concept = m ? this.concepts(m[1]!)[0] : undefined;
        if (concept) return concept;
      }
    }
    return undefined;
  }

  /**
   * Which end of its scale an adjective names: +1 much (heavy, long, expensive), -1 little
   * (light, short, cheap), read from the gloss of its first sense that has an attribute; words
   * WordNet does not mark count as +1 (an adjective usually names the presence of a quality).
   */
  polarity(adjective: string): 1 | -1 {
    const w = adjective.toLowerCase();
    const base = IRREGULAR.get(w)?.base ?? w;
    if (base === 'bad' || base === 'little' || base === 'few') return -1;
    for (const base of this.baseForms(w)) {
      // the first adjective sense only: later senses drift ("quick": "hurried and brief")
      const id = this.senses(base, 'a')[0];
      const s = id ? this.wn.synset(id) : undefined;
      if (!s) continue;
      const gloss = s.gloss.split('"')[0]!.toLowerCase();
      const low = gloss.search(LOW_MARKERS);
      const high = gloss.search(HIGH_MARKERS);
      if (low >= 0 && (high < 0 || low < high)) return -1;
      return 1;
    }
    return 1;
  }

  /**
   * Nouns close to a property's label word: its synonyms (0.9), and one level of hypernyms and
   * hyponyms (0.6): "score" answers to "goals", "magnitude" to "size".
   */
  neighbours(word: string): Related {
    const out: Related = new Map();
    for (const base of this.baseForms(word).slice(0, 1)) {
      this.senses(base, 'n')
        .slice(0, 3)
        .forEach((id, rank) => {
          const s = this.wn.synset(id);
          if (!s) return;
          const near = rank === 0 ? 1 : 0.85;
          for (const l of s.lemmas) if ((out.get(l) ?? 0) < 0.9 * near) out.set(l, 0.9 * near);
          for (const p of s.pointers) {
            if (p.symbol !== '@' && p.symbol !== '~') continue;
            for (const l of this.wn.synset(p.id)?.lemmas.slice(0, 3) ?? [])
              if ((out.get(l) ?? 0) < 0.6 * near) out.set(l, 0.6 * near);
          }
        });
    }
    return out;
  }

  /** Abstract concepts a word (or a property's label word) belongs to, through WordNet's hypernyms. */
  concepts(word: string): Concept[] {
    const key = word.toLowerCase();
    const hit = this.conceptCache.get(key);
    if (hit) return hit;
    const found = new Set<Concept>();
    const check = (lemmas: readonly string[]): void => {
      for (const [concept, anchors] of Object.entries(CONCEPTS) as [Concept, readonly string[]][])
        if (lemmas.some((l) => anchors.includes(l))) found.add(concept);
    };
    for (const base of this.baseForms(key)) {
      for (const pos of ['n', 'v', 'a'] as const) {
        // a verb's rarer senses reach too far ("used": use up, expend → expenditure)
        for (const id of this.senses(base, pos).slice(0, pos === 'v' ? 2 : 4)) {
          // the synset, its derivations and up to three hypernyms up
          const frontier = [id];
          const seen = new Set<string>();
          for (let depth = 0; depth < 4 && frontier.length; depth++) {
            const next: string[] = [];
            for (const f of frontier) {
              if (seen.has(f)) continue;
              seen.add(f);
              const s = this.wn.synset(f);
              if (!s) continue;
              check(s.lemmas);
              for (const p of s.pointers) {
                if (p.symbol === '@' || p.symbol === '@i') next.push(p.id);
                else if (depth === 0 && (p.symbol === '+' || p.symbol === '=')) next.push(p.id);
              }
            }
            frontier.splice(0, frontier.length, ...next);
          }
        }
      }
    }
    const out = [...found];
    this.conceptCache.set(key, out);
    return out;
  }
}
