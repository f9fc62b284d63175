import type { NameMatch } from '@askbus/contracts';
import { STOPWORDS, foldText } from '@askbus/search-core';

/**
 * Finding the items a question names. Names are compared as word sequences, tolerant of case,
 * accents, punctuation and a leading article ("The Dark Knight" = "dark knight"); a question is
 * scanned for the longest sequences that are names. The index lives with the items (the
 * retriever); the parser decides which matches to trust.
 */

/** A word of a text with where it is. */
export interface WordSpan {
  word: string;
  start: number;
  end: number;
}

/** Words of a text (folded to lowercase without accents), with their character offsets. */
export function wordSpans(text: string): WordSpan[] {
  const out: WordSpan[] = [];
  // fold per character run so offsets stay those of the original text
  const re = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;
  for (const m of text.matchAll(re)) {
    let word = foldText(m[0])
      .replace(/['’]s$/, '')
      .replace(/['’]/g, '');
    if (word === '') continue;
    word = word.normalize('NFC');
    out.push({ word, start: m.index, end: m.index + m[0].length });
  }
  return out;
}

const ARTICLES = new Set(['the', 'a', 'an']);

/** The words a name is looked up by: folded, punctuation gone, a leading article dropped. */
export function nameKey(name: string): string {
  const words = wordSpans(name).map((w) => w.word);
  while (words.length > 1 && ARTICLES.has(words[0]!)) words.shift();
  return words.join(' ');
}

export interface IndexedName {
  url: string;
  name: string;
  site: string;
  type: string;
  year?: number;
}

/** Longest name looked for, in words. */
const MAX_NAME_WORDS = 12;
/** Items returned per match (and kept per name beginning). */
const MAX_ITEMS = 20;
/** Longest beginning of a name that finds it ("toyota corolla" → "Toyota Corolla 1200"). */
const MAX_PREFIX_WORDS = 5;

/**
 * Item names by their key, per site: exact keys, and every leading part of a longer name (so
 * "toyota corolla" finds "Toyota Corolla 1200" when no car is called just that).
 */
export class NameIndex {
  private readonly exact = new Map<string, IndexedName[]>();
  private readonly prefixes = new Map<string, IndexedName[]>();
  private readonly byUrl = new Map<string, IndexedName>();

  get size(): number {
    return this.byUrl.size;
  }

  /** Every entry, in the order added (`add` them again to rebuild the index). */
  entries(): IndexedName[] {
    return [...this.byUrl.values()];
  }

  /** Each entry's key (nameKey of its name), in the order of `entries`. */
  keys(): string[] {
    return [...this.byUrl.values()].map((e) => nameKey(e.name));
  }

  add(entry: IndexedName): void {
    this.addKeyed(entry, nameKey(entry.name));
  }

  /** `add` with the name's key already known (`keys` gives them, in the order of `entries`). */
  addKeyed(entry: IndexedName, key: string): void {
    this.remove(entry.url);
    if (key) this.link(entry, key);
  }

  /**
   * Replaces every entry with `entries` (`keys`: their keys, in order, as `keys()` gave them):
   * a saved index read back in one pass, without looking for entries to replace.
   */
  restore(entries: readonly IndexedName[], keys?: readonly string[]): void {
    this.exact.clear();
    this.prefixes.clear();
    this.byUrl.clear();
    const keyed = keys?.length === entries.length ? keys : undefined;
    entries.forEach((e, i) => {
      const key = keyed ? keyed[i]! : nameKey(e.name);
      if (this.byUrl.has(e.url)) this.addKeyed(e, key);
      else if (key) this.link(e, key);
    });
  }

  /** Puts an entry (under no other key) in the maps. */
  private link(entry: IndexedName, key: string): void {
    this.byUrl.set(entry.url, entry);
    push(this.exact, key, entry);
    // the leading 2…MAX_PREFIX_WORDS words of a longer key (its words are joined by one space)
    let end = key.indexOf(' ');
    for (let n = 2; end >= 0 && n <= MAX_PREFIX_WORDS; n++) {
      end = key.indexOf(' ', end + 1);
      if (end < 0) break;
      push(this.prefixes, key.slice(0, end), entry, MAX_ITEMS);
    }
  }

  remove(url: string): void {
    const old = this.byUrl.get(url);
    if (!old) return;
    this.byUrl.delete(url);
    const key = nameKey(old.name);
    pull(this.exact, key, url);
    const words = key.split(' ');
    for (let n = 2; n < Math.min(words.length, MAX_PREFIX_WORDS + 1); n++)
      pull(this.prefixes, words.slice(0, n).join(' '), url);
  }

  /**
   * The stretches of `text` that are item names of the given sites (undefined: all), longest
   * first and not overlapping. A stretch that only begins longer names counts when it has two
   * or more words and no item has exactly that name.
   */
  find(
    text: string,
    sites?: ReadonlySet<string>,
    isCommonWord: (w: string) => boolean = () => false,
  ): NameMatch[] {
    const words = wordSpans(text);
    const out: NameMatch[] = [];
    const keep = (list: readonly IndexedName[] | undefined): IndexedName[] =>
      (list ?? []).filter((e) => !sites || sites.has(e.site));
    for (let i = 0; i < words.length;) {
      let found: NameMatch | undefined;
      // a leading article belongs to the name when the name is found after it
      const from = ARTICLES.has(words[i]!.word) && i + 1 < words.length ? i + 1 : i;
      for (let n = Math.min(MAX_NAME_WORDS, words.length - from); n >= 1 && !found; n--) {
        const slice = words.slice(from, from + n);
        const key = slice.map((w) => w.word).join(' ');
        const exact = keep(this.exact.get(key));
        const partial = exact.length === 0 && n >= 2 ? keep(this.prefixes.get(key)) : [];
        const items = exact.length ? exact : partial;
        if (items.length === 0) continue;
        // a name of stopwords only ("It", "Up") is never taken from running text
        if (slice.every((w) => STOPWORDS.has(w.word))) continue;
        const common = n === 1 && (isCommonWord(key) || /^\d+$/.test(key));
        found = {
          start: words[i === from ? from : i]!.start,
          end: slice.at(-1)!.end,
          exact: exact.length > 0,
          common,
          items: items.slice(0, MAX_ITEMS).map((e) => ({
            url: e.url,
            name: e.name,
            site: e.site,
            type: e.type,
            ...(e.year !== undefined ? { year: e.year } : {}),
          })),
        };
        i = from + n;
      }
      if (found) out.push(found);
      else i++;
    }
    return out.slice(0, 50);
  }
}

function push(m: Map<string, IndexedName[]>, key: string, e: IndexedName, cap = Infinity): void {
  const list = m.get(key);
  if (list) {
    if (list.length < cap) list.push(e);
  } else m.set(key, [e]);
}

function pull(m: Map<string, IndexedName[]>, key: string, url: string): void {
  const list = m.get(key);
  if (!list) return;
  const rest = list.filter((e) => e.url !== url);
  if (rest.length) m.set(key, rest);
  else m.delete(key);
}
