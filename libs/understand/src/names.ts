import type { NameMatch } from '@askbus/contracts';
import { STOPWORDS, foldText, grownTo } from '@askbus/search-core';

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

/** 'ABNM': the first word of NameIndex.save's bytes. */
const SAVED_NAMES_MAGIC = 0x4d4e4241;
const SAVED_NAMES_VERSION = 1;
/** Header words: magic, version, count, the labels' JSON bytes, and each text blob's encoding and bytes. */
const SAVED_NAMES_HEADER = 4 * 8;
/** Bytes per entry of the fixed-width columns: year (f64), number, name bytes, key bytes, site, type (u32 each). */
const SAVED_NAMES_ROW = 8 + 5 * 4;

/**
 * Item names by their key, per site: exact keys, and every leading part of a longer name (so
 * "toyota corolla" finds "Toyota Corolla 1200" when no car is called just that).
 *
 * Entries are slots in columns (URL, name, site and type as indices into one label table, year)
 * and the maps hold slot numbers, not one object per item: at 300k items the objects and their
 * lists were much of the names' memory. `find` builds objects only for what it returns.
 */
export class NameIndex {
  /** Key → the slot of its one entry, or the slots of several. */
  private readonly exact = new Map<string, number | number[]>();
  private readonly prefixes = new Map<string, number[]>();
  /** URL → slot, in the order entries were added. */
  private readonly byUrl = new Map<string, number>();
  private slotUrls: Array<string | undefined> = [];
  private slotNames: string[] = [];
  private slotSites = new Uint32Array(0);
  private slotTypes = new Uint32Array(0);
  /** NaN: no year. */
  private slotYears = new Float64Array(0);
  private readonly freeSlots: number[] = [];
  /** Sites and types, each once (slots hold their indices). */
  private labels: string[] = [];
  private labelIds = new Map<string, number>();

  get size(): number {
    return this.byUrl.size;
  }

  /** Every entry, in the order added (`add` them again to rebuild the index). */
  entries(): IndexedName[] {
    return [...this.byUrl.values()].map((slot) => this.entryAt(slot));
  }

  /** Each entry's key (nameKey of its name), in the order of `entries`. */
  keys(): string[] {
    const keyOf = this.slotKeys();
    return [...this.byUrl.values()].map((slot) => keyOf[slot]!);
  }

  add(entry: IndexedName): void {
    this.addKeyed(entry, nameKey(entry.name));
  }

  /** `add` with the name's key already known (`keys` gives them, in the order of `entries`). */
  addKeyed(entry: IndexedName, key: string): void {
    this.remove(entry.url);
    if (key)
      this.link(
        entry.url,
        entry.name,
        this.labelId(entry.site),
        this.labelId(entry.type),
        entry.year ?? NaN,
        key,
      );
  }

  /**
   * Replaces every entry with `entries` (`keys`: their keys, in order, as `keys()` gave them):
   * a saved index read back in one pass, without looking for entries to replace.
   */
  restore(entries: readonly IndexedName[], keys?: readonly string[]): void {
    this.clear();
    const keyed = keys?.length === entries.length ? keys : undefined;
    entries.forEach((e, i) => this.addKeyed(e, keyed ? keyed[i]! : nameKey(e.name)));
  }

  /**
   * The entries as bytes (`load` reads them back): columns, the sites and types once each, the
   * names and keys as two blobs. `numberOf` gives the number that stands for an entry's URL
   * (the embedded store's document number: its URLs are saved once, in its document list);
   * entries without one are left out.
   */
  save(numberOf: (url: string) => number | undefined): Buffer {
    const keyOf = this.slotKeys();
    const slots: number[] = [];
    const numbers: number[] = [];
    for (const [url, slot] of this.byUrl) {
      const n = numberOf(url);
      if (n === undefined || !Number.isInteger(n) || n < 0 || n > 0x7fffffff) continue;
      slots.push(slot);
      numbers.push(n);
    }
    const count = slots.length;
    const names = slots.map((s) => this.slotNames[s]!);
    const keys = slots.map((s) => keyOf[s]!);
    const labels = Buffer.from(JSON.stringify(this.labels));
    const nameBlob = encodeTexts(names);
    const keyBlob = encodeTexts(keys);
    const head = Buffer.alloc(SAVED_NAMES_HEADER);
    [
      SAVED_NAMES_MAGIC,
      SAVED_NAMES_VERSION,
      count,
      labels.length,
      nameBlob.code,
      nameBlob.bytes.length,
      keyBlob.code,
      keyBlob.bytes.length,
    ].forEach((v, i) => head.writeUInt32LE(v, 4 * i));
    const years = new Float64Array(count);
    const columns = new Uint32Array(5 * count);
    slots.forEach((slot, i) => {
      years[i] = this.slotYears[slot]!;
      columns[i] = numbers[i]!;
      columns[count + i] = Buffer.byteLength(names[i]!, nameBlob.encoding);
      columns[2 * count + i] = Buffer.byteLength(keys[i]!, keyBlob.encoding);
      columns[3 * count + i] = this.slotSites[slot]!;
      columns[4 * count + i] = this.slotTypes[slot]!;
    });
    return Buffer.concat([
      head,
      Buffer.from(years.buffer, years.byteOffset, years.byteLength),
      Buffer.from(columns.buffer, columns.byteOffset, columns.byteLength),
      labels,
      nameBlob.bytes,
      keyBlob.bytes,
    ]);
  }

  /**
   * Replaces every entry with those `save` wrote; `urlOf` gives back the URL of each number.
   * Throws on bytes that are not such (nothing is changed then).
   */
  load(bytes: Uint8Array, urlOf: (n: number) => string | undefined): void {
    const damaged = (what: string): Error => new Error(`the saved names are damaged: ${what}`);
    if (bytes.length < SAVED_NAMES_HEADER) throw damaged('too short');
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const word = (i: number): number => view.getUint32(4 * i, true);
    if (word(0) !== SAVED_NAMES_MAGIC || word(1) !== SAVED_NAMES_VERSION) throw damaged('not saved names');
    const count = word(2);
    const labelBytes = word(3);
    const nameEncoding = blobEncoding(word(4));
    const nameBytes = word(5);
    const keyEncoding = blobEncoding(word(6));
    const keyBytes = word(7);
    const columnsAt = SAVED_NAMES_HEADER + 8 * count;
    const labelsAt = SAVED_NAMES_HEADER + SAVED_NAMES_ROW * count;
    if (labelsAt + labelBytes + nameBytes + keyBytes !== bytes.length) throw damaged('wrong length');
    // copied out: the columns need not be aligned in the file
    const years = new Float64Array(count);
    new Uint8Array(years.buffer).set(bytes.subarray(SAVED_NAMES_HEADER, columnsAt));
    const columns = new Uint32Array(5 * count);
    new Uint8Array(columns.buffer).set(bytes.subarray(columnsAt, labelsAt));
    let labels: unknown;
    try {
      labels = JSON.parse(
        Buffer.from(bytes.buffer, bytes.byteOffset + labelsAt, labelBytes).toString('utf8'),
      );
    } catch {
      throw damaged('labels');
    }
    if (
      !Array.isArray(labels) ||
      !labels.every((l) => typeof l === 'string') ||
      new Set(labels).size !== labels.length
    )
      throw damaged('labels');
    if (!nameEncoding || !keyEncoding) throw damaged('text encoding');
    let nameEnd = labelsAt + labelBytes;
    let keyEnd = nameEnd + nameBytes;
    // looked up once, while checking (before anything changes)
    const urls: string[] = new Array<string>(count);
    for (let i = 0; i < count; i++) {
      const year = years[i]!;
      if (!Number.isNaN(year) && !Number.isInteger(year)) throw damaged('a year');
      const url = urlOf(columns[i]!);
      if (url === undefined) throw damaged('a number without a URL');
      urls[i] = url;
      nameEnd += columns[count + i]!;
      if (columns[2 * count + i]! === 0) throw damaged('an empty key');
      keyEnd += columns[2 * count + i]!;
      if (columns[3 * count + i]! >= labels.length || columns[4 * count + i]! >= labels.length)
        throw damaged('a site or type');
    }
    if (nameEnd !== labelsAt + labelBytes + nameBytes || keyEnd !== bytes.length)
      throw damaged('text lengths');

    this.clear();
    this.labels = labels as string[];
    this.labelIds = new Map(this.labels.map((l, i) => [l, i]));
    this.reserve(count);
    // each name and key a string of its own, decoded from the file (a slice of one string of
    // them all would hold the whole and cost more than the text it points to)
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let nameAt = labelsAt + labelBytes;
    let keyAt = nameAt + nameBytes;
    for (let i = 0; i < count; i++) {
      const name = buf.toString(nameEncoding, nameAt, (nameAt += columns[count + i]!));
      const key = buf.toString(keyEncoding, keyAt, (keyAt += columns[2 * count + i]!));
      const url = urls[i]!;
      // a URL twice (not written so): the later wins, as with add
      if (this.byUrl.has(url)) this.remove(url);
      this.link(url, name, columns[3 * count + i]!, columns[4 * count + i]!, years[i]!, key);
    }
  }

  /** Puts an entry (under no other key) in a slot and the maps. */
  private link(url: string, name: string, site: number, type: number, year: number, key: string): void {
    let slot = this.freeSlots.pop();
    if (slot === undefined) {
      slot = this.slotUrls.length;
      this.reserve(slot + 1);
    }
    this.slotUrls[slot] = url;
    this.slotNames[slot] = name;
    this.slotSites[slot] = site;
    this.slotTypes[slot] = type;
    this.slotYears[slot] = year;
    this.byUrl.set(url, slot);
    const list = this.exact.get(key);
    if (list === undefined) this.exact.set(key, slot);
    else if (typeof list === 'number') this.exact.set(key, [list, slot]);
    else list.push(slot);
    // the leading 2…MAX_PREFIX_WORDS words of a longer key (its words are joined by one space)
    let end = key.indexOf(' ');
    for (let n = 2; end >= 0 && n <= MAX_PREFIX_WORDS; n++) {
      end = key.indexOf(' ', end + 1);
      if (end < 0) break;
      const prefix = key.slice(0, end);
      const slots = this.prefixes.get(prefix);
      if (!slots) this.prefixes.set(prefix, [slot]);
      else if (slots.length < MAX_ITEMS) slots.push(slot);
    }
  }

  remove(url: string): void {
    const slot = this.byUrl.get(url);
    if (slot === undefined) return;
    this.byUrl.delete(url);
    const key = nameKey(this.slotNames[slot]!);
    const list = this.exact.get(key);
    if (list === slot) this.exact.delete(key);
    else if (typeof list === 'object') {
      const rest = list.filter((s) => s !== slot);
      if (rest.length === 0) this.exact.delete(key);
      else this.exact.set(key, rest.length === 1 ? rest[0]! : rest);
    }
    const words = key.split(' ');
    for (let n = 2; n < Math.min(words.length, MAX_PREFIX_WORDS + 1); n++) {
      const prefix = words.slice(0, n).join(' ');
      const rest = this.prefixes.get(prefix)?.filter((s) => s !== slot);
      if (rest?.length) this.prefixes.set(prefix, rest);
      else this.prefixes.delete(prefix);
    }
    this.slotUrls[slot] = undefined;
    this.slotNames[slot] = '';
    this.freeSlots.push(slot);
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
    const keep = (list: number | readonly number[] | undefined): number[] => {
      const slots = list === undefined ? [] : typeof list === 'number' ? [list] : list;
      return slots.filter((s) => !sites || sites.has(this.labels[this.slotSites[s]!]!));
    };
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
          items: items.slice(0, MAX_ITEMS).map((s) => this.entryAt(s)),
        };
        i = from + n;
      }
      if (found) out.push(found);
      else i++;
    }
    return out.slice(0, 50);
  }

  private entryAt(slot: number): IndexedName {
    const year = this.slotYears[slot]!;
    return {
      url: this.slotUrls[slot]!,
      name: this.slotNames[slot]!,
      site: this.labels[this.slotSites[slot]!]!,
      type: this.labels[this.slotTypes[slot]!]!,
      ...(Number.isNaN(year) ? {} : { year }),
    };
  }

  /** Each slot's key (the key it is filed under in `exact`). */
  private slotKeys(): string[] {
    const keyOf: string[] = [];
    for (const [key, list] of this.exact) {
      if (typeof list === 'number') keyOf[list] = key;
      else for (const slot of list) keyOf[slot] = key;
    }
    return keyOf;
  }

  private labelId(label: string): number {
    let id = this.labelIds.get(label);
    if (id === undefined) {
      id = this.labels.length;
      this.labels.push(label);
      this.labelIds.set(label, id);
    }
    return id;
  }

  /** Room for `slots` slots in the typed columns (grown by half again, so adding one at a time stays cheap). */
  private reserve(slots: number): void {
    if (slots <= this.slotYears.length) return;
    const capacity = Math.max(slots, Math.ceil(this.slotYears.length * 1.5), 64);
    this.slotSites = grownTo(this.slotSites, capacity);
    this.slotTypes = grownTo(this.slotTypes, capacity);
    this.slotYears = grownTo(this.slotYears, capacity);
  }

  private clear(): void {
    this.exact.clear();
    this.prefixes.clear();
    this.byUrl.clear();
    this.slotUrls = [];
    this.slotNames = [];
    this.slotSites = new Uint32Array(0);
    this.slotTypes = new Uint32Array(0);
    this.slotYears = new Float64Array(0);
    this.freeSlots.length = 0;
    this.labels = [];
    this.labelIds = new Map();
  }
}

/** Text blob encodings: UTF-8, or UTF-16 when a text is not well formed (a lone surrogate: kept exactly). */
const UTF8 = 0;
const UTF16 = 1;

/** Texts as one blob (each one's length in bytes is saved beside it). */
function encodeTexts(texts: readonly string[]): { code: number; encoding: BufferEncoding; bytes: Buffer } {
  const joined = texts.join('');
  // a lone surrogate: UTF-8 would make it U+FFFD
  const code = /\p{Surrogate}/u.test(joined) ? UTF16 : UTF8;
  const encoding = blobEncoding(code)!;
  return { code, encoding, bytes: Buffer.from(joined, encoding) };
}

/** How a saved blob is decoded; undefined for an unknown encoding. */
function blobEncoding(code: number): BufferEncoding | undefined {
  return code === UTF8 ? 'utf8' : code === UTF16 ? 'utf16le' : undefined;
}
